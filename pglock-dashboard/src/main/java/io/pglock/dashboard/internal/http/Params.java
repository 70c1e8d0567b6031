package io.pglock.dashboard.internal.http;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Parameters of a query string or a form, in order, with blank values treated as absent. */
public final class Params {
  private final Map<String, List<String>> values;

  private Params(Map<String, List<String>> values) {
    this.values = values;
  }

  /** {@return the parameters of an {@code application/x-www-form-urlencoded} string (or a query string)} */
  public static Params parse(String encoded) {
    Map<String, List<String>> values = new LinkedHashMap<>();
    if (encoded != null && !encoded.isEmpty()) {
      for (String pair : encoded.split("&")) {
        if (pair.isEmpty()) {
          continue;
        }
        int eq = pair.indexOf('=');
        String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
        String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
        values.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
      }
    }
    return new Params(values);
  }

  /** {@return parameters from a map of name to values (a servlet's parameter map)} */
  public static Params of(Map<String, String[]> map) {
    Map<String, List<String>> values = new LinkedHashMap<>();
    map.forEach((k, v) -> values.put(k, List.of(v)));
    return new Params(values);
  }

  /** {@return the first non-blank value of a parameter, trimmed} */
  public Optional<String> get(String name) {
    List<String> list = values.get(name);
    if (list == null) {
      return Optional.empty();
    }
    return list.stream().map(String::strip).filter(s -> !s.isEmpty()).findFirst();
  }

  /** {@return every value of a parameter} */
  public List<String> all(String name) {
    return values.getOrDefault(name, List.of());
  }
}
