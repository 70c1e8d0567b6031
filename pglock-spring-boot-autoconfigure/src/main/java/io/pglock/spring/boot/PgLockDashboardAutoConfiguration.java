package io.pglock.spring.boot;

import io.pglock.PgLocks;
import io.pglock.dashboard.Dashboard;
import io.pglock.dashboard.DashboardAuthorizer;
import io.pglock.dashboard.DashboardBuilder;
import io.pglock.dashboard.DashboardServlet;
import io.pglock.spring.dashboard.SpringSecurityCsrfFields;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Base64;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ResourceLoader;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * pglock's web {@link Dashboard}, served by the application's servlet container at
 * {@code pglock.dashboard.path} (default {@code /pglock}) when {@code pglock.dashboard.enabled=true}
 * (off by default: the dashboard retries, discards, cancels and deletes jobs and triggers and pauses
 * tasks, which an application opts into), in a servlet web application with pglock-dashboard on the
 * class path. It reads the database and schema of the {@link PgLocks} bean, borrowing a connection
 * of its pool per request.
 *
 * <p>The application's own security guards the path: the dashboard sees the caller as the servlet
 * container does ({@code getRemoteUser}, {@code isUserInRole}). Who may act: an application
 * {@link DashboardAuthorizer} bean; else the role {@code pglock.dashboard.role}; else, with Spring
 * Security on the class path, any authenticated caller; else anyone who reaches the path. With
 * Spring Security the forms also carry its CSRF token ({@link SpringSecurityCsrfFields}). The
 * {@code Dashboard} bean and the servlet's registration ({@code pgLockDashboardServlet}) back off when
 * the application defines its own.
 */
@AutoConfiguration(after = PgLockAutoConfiguration.class)
@ConditionalOnClass(Dashboard.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBean(PgLocks.class)
@ConditionalOnProperty(prefix = "pglock.dashboard", name = "enabled", havingValue = "true")
@EnableConfigurationProperties(PgLockProperties.class)
public class PgLockDashboardAutoConfiguration {
  private static final Logger log = LoggerFactory.getLogger(PgLockDashboardAutoConfiguration.class);
  /** A class of spring-security-web: its presence means the application runs Spring Security. */
  static final String SPRING_SECURITY = "org.springframework.security.web.csrf.CsrfToken";

  /** Creates the auto-configuration (Spring calls it). */
  public PgLockDashboardAutoConfiguration() {}

  /**
   * The dashboard over the {@link PgLocks} bean's database and schema, with the
   * {@code pglock.dashboard.*} settings.
   *
   * @param locks the node's instance: its DataSource and schema
   * @param properties pglock's settings
   * @param authorizers the application's authorizer, if it defines one
   * @param resourceLoader the context's, for its class loader (is Spring Security there?)
   * @return the dashboard
   * @throws IllegalArgumentException if a setting is invalid, naming it
   * @throws IllegalStateException if both {@code pglock.dashboard.role} and an authorizer bean are set
   */
  @Bean
  @ConditionalOnMissingBean
  public Dashboard pgLockDashboard(PgLocks locks, PgLockProperties properties,
      ObjectProvider<DashboardAuthorizer> authorizers, ResourceLoader resourceLoader) {
    PgLockProperties.Dashboard settings = properties.getDashboard();
    String schema = locks.config().schema() != null ? locks.config().schema() : properties.getSchema().getName();
    DashboardAuthorizer own = authorizers.getIfAvailable();
    boolean springSecurity = ClassUtils.isPresent(SPRING_SECURITY, resourceLoader.getClassLoader());
    DashboardBuilder b = Dashboard.builder(locks.config().dataSource()).schema(schema)
        .readOnly(settings.isReadOnly())
        .authorizer(authorizer(own, settings.getRole(), springSecurity));
    if (StringUtils.hasText(settings.getCsrfSecret())) {
      b.csrfSecret(csrfSecret(settings.getCsrfSecret()));
    }
    try {
      if (settings.getRefresh() != null) {
        b.refresh(settings.getRefresh());
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("pglock.dashboard.refresh: " + e.getMessage());
    }
    try {
      if (settings.getQueryTimeout() != null) {
        b.queryTimeout(settings.getQueryTimeout());
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("pglock.dashboard.query-timeout: " + e.getMessage());
    }
    Dashboard dashboard = b.build();
    log.info("pglock: dashboard over schema \"{}\": {}", schema, settings.isReadOnly() ? "read-only"
        : "actions by " + who(own, settings.getRole(), springSecurity));
    return dashboard;
  }

  /** Without Spring Security: the servlet's forms carry the dashboard's own token only. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingClass(SPRING_SECURITY)
  static class Plain {
    @Bean
    @ConditionalOnMissingBean(name = "pgLockDashboardServlet")
    ServletRegistrationBean<DashboardServlet> pgLockDashboardServlet(Dashboard dashboard,
        PgLockProperties properties) {
      return registration(dashboard, properties.getDashboard(), r -> Map.of());
    }
  }

  /** With Spring Security: the forms also carry its CSRF token, so that its CsrfFilter lets their POSTs by. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = SPRING_SECURITY)
  static class WithSpringSecurity {
    @Bean
    @ConditionalOnMissingBean(name = "pgLockDashboardServlet")
    ServletRegistrationBean<DashboardServlet> pgLockDashboardServlet(Dashboard dashboard,
        PgLockProperties properties) {
      return registration(dashboard, properties.getDashboard(), new SpringSecurityCsrfFields());
    }
  }

  static ServletRegistrationBean<DashboardServlet> registration(Dashboard dashboard,
      PgLockProperties.Dashboard settings, Function<HttpServletRequest, Map<String, String>> formFields) {
    String path = checkPath(settings.getPath());
    ServletRegistrationBean<DashboardServlet> r =
        new ServletRegistrationBean<>(new DashboardServlet(dashboard, formFields), path + "/*");
    r.setName("pglockDashboard");
    log.info("pglock: dashboard served at {}/", path);
    return r;
  }

  /** {@return who may act, in words, for the log} */
  private static String who(DashboardAuthorizer own, String role, boolean springSecurity) {
    if (own != null) {
      return "the application's DashboardAuthorizer";
    }
    if (StringUtils.hasText(role)) {
      return "callers with role " + role.strip();
    }
    return springSecurity ? "authenticated callers" : "anyone who reaches the path";
  }

  /**
   * {@return who may act}: the application's authorizer, else the role, else authenticated callers
   * under Spring Security, else everyone.
   */
  static DashboardAuthorizer authorizer(DashboardAuthorizer own, String role, boolean springSecurity) {
    if (own != null) {
      if (StringUtils.hasText(role)) {
        throw new IllegalStateException("pglock.dashboard.role=" + role + " and the application's DashboardAuthorizer"
            + " bean both say who may act on the dashboard: remove one (the bean can use DashboardAuthorizer.role)");
      }
      return own;
    }
    if (StringUtils.hasText(role)) {
      return DashboardAuthorizer.role(role.strip());
    }
    return springSecurity ? DashboardAuthorizer.authenticated() : DashboardAuthorizer.allowAll();
  }

  /** {@return the secret's bytes} */
  static byte[] csrfSecret(String base64) {
    byte[] secret;
    try {
      secret = Base64.getDecoder().decode(base64.strip());
    } catch (IllegalArgumentException e) {
      // the message would show a character of the secret: leave it out
      throw new IllegalArgumentException("pglock.dashboard.csrf-secret is not base64: give at least 32 random"
          + " bytes in base64 (openssl rand -base64 32), the same on every instance");
    }
    if (secret.length < 32) {
      throw new IllegalArgumentException("pglock.dashboard.csrf-secret is " + secret.length + " bytes, at least 32"
          + " are needed: give 32 random bytes in base64 (openssl rand -base64 32), the same on every instance");
    }
    return secret;
  }

  /** {@return the path, if it is one the servlet can be mapped under} */
  static String checkPath(String path) {
    boolean ok = path != null && path.length() > 1 && path.startsWith("/") && !path.endsWith("/")
        && !path.contains("//") && path.chars().noneMatch(c -> c <= ' ' || "*?#;%\\".indexOf(c) >= 0);
    if (!ok) {
      throw new IllegalArgumentException("pglock.dashboard.path must start with /, end without /, and have no"
          + " wildcard (the dashboard is mapped at path/*), such as /pglock or /admin/pglock, not '" + path + "'");
    }
    return path;
  }
}
