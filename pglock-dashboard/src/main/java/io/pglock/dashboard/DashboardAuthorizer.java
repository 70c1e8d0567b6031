package io.pglock.dashboard;

import java.util.Objects;

/**
 * Decides whether a caller may take an action. The dashboard asks before every action, and hides
 * the buttons of actions the caller may not take; pages themselves are for whoever can reach them,
 * so protect the path with the server's own authentication.
 */
@FunctionalInterface
public interface DashboardAuthorizer {

  /**
   * {@return whether the caller may take the action}
   *
   * @param caller who asks
   * @param action what they ask to do
   */
  boolean allows(DashboardCaller caller, DashboardAction action);

  /** {@return an authorizer that allows every action to everyone who reaches the dashboard} */
  static DashboardAuthorizer allowAll() {
    return (caller, action) -> true;
  }

  /** {@return an authorizer that allows every action to callers the server authenticated} */
  static DashboardAuthorizer authenticated() {
    return (caller, action) -> caller.name().isPresent();
  }

  /**
   * {@return an authorizer that allows every action to callers with a role}
   *
   * @param role the role, as the server knows it (for Spring Security, without {@code ROLE_})
   */
  static DashboardAuthorizer role(String role) {
    Objects.requireNonNull(role, "role");
    return (caller, action) -> caller.isInRole(role);
  }
}
