package io.pglock.dashboard;

import java.util.Optional;

/**
 * Who is asking, as the server that mounts the dashboard knows them: the authenticated user of the
 * servlet container or Spring Security, or of a JDK {@code HttpServer} authenticator.
 */
public interface DashboardCaller {

  /** {@return the caller's name, if the server authenticated them} */
  Optional<String> name();

  /**
   * {@return whether the caller has a role, as the server knows roles (the servlet's
   * {@code isUserInRole}); false where the server has no roles}
   *
   * @param role the role's name
   */
  boolean isInRole(String role);

  /** {@return the name recorded for the caller's actions: their name, or {@code anonymous}} */
  default String recordedName() {
    return name().orElse("anonymous");
  }
}
