package io.pglock.dashboard.internal;

import gg.jte.ContentType;
import gg.jte.TemplateEngine;
import gg.jte.output.StringOutput;
import java.util.Map;

/**
 * The pages' templates, compiled to classes of this jar at build time (jte): nothing is parsed or
 * compiled at run time, and every value is HTML-escaped for where it is written.
 */
final class Templates {
  private final TemplateEngine engine = TemplateEngine.createPrecompiled(null, ContentType.Html,
      Templates.class.getClassLoader(), "io.pglock.dashboard.internal.templates");

  String render(String name, Map<String, Object> params) {
    StringOutput out = new StringOutput();
    engine.render(name, params, out);
    return out.toString();
  }
}
