package io.pglock.dashboard.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;

/** The stylesheet and the script, from this jar, cached by browsers for an hour. */
final class Assets {
  private static final Map<String, String> TYPES = Map.of("dashboard.css", "text/css; charset=utf-8",
      "dashboard.js", "text/javascript; charset=utf-8");

  private Assets() {}

  static Optional<Response> get(String name) {
    String type = TYPES.get(name);
    if (type == null) {
      return Optional.empty();
    }
    try (InputStream in = Assets.class.getResourceAsStream("/io/pglock/dashboard/assets/" + name)) {
      if (in == null) {
        return Optional.empty();
      }
      Map<String, String> h = Response.pageHeaders(type);
      h.put("Cache-Control", "public, max-age=3600");
      return Optional.of(new Response(200, h, in.readAllBytes()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
