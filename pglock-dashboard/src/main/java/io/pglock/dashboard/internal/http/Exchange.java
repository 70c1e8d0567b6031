package io.pglock.dashboard.internal.http;

import io.pglock.dashboard.DashboardCaller;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;

/** One request and its response, as the dashboard sees them whatever server carries them. */
public interface Exchange {

  /** {@return GET, POST, ...} */
  String method();

  /** {@return the path below the dashboard's mount point, starting with a slash} */
  String path();

  /** {@return the mount point as the browser sees it, without a trailing slash (empty at the root)} */
  String basePath();

  /** {@return the query string's parameters} */
  Params query();

  /**
   * {@return the form's parameters of a POST}
   *
   * @throws IOException if the body cannot be read
   */
  Params form() throws IOException;

  /**
   * {@return a request header}
   *
   * @param name its name, any case
   */
  Optional<String> header(String name);

  /** {@return who asks} */
  DashboardCaller caller();

  /** {@return hidden fields every form must carry for the server around the dashboard (Spring Security's token)} */
  Map<String, String> extraFormFields();

  /** {@return true if the browser reached the dashboard over HTTPS} */
  boolean secure();

  /**
   * Sends the response.
   *
   * @param status the status code
   * @param headers the headers, Content-Type among them
   * @param body the body
   * @throws IOException if the client went away
   */
  void respond(int status, Map<String, String> headers, byte[] body) throws IOException;
}
