package io.pglock.dashboard;

import io.pglock.PgLockSchema;
import io.pglock.dashboard.internal.Csrf;
import io.pglock.dashboard.internal.Settings;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;

/** Builds a {@link Dashboard}; get one from {@link Dashboard#builder(DataSource)}. */
public final class DashboardBuilder {
  private final DataSource dataSource;
  private String schema = PgLockSchema.DEFAULT_SCHEMA;
  private boolean readOnly;
  private DashboardAuthorizer authorizer = DashboardAuthorizer.allowAll();
  private byte[] csrfSecret;
  private Duration queryTimeout = Duration.ofSeconds(5);
  private Duration refresh = Duration.ofSeconds(3);

  DashboardBuilder(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * The schema of pglock's tables and views (default {@value PgLockSchema#DEFAULT_SCHEMA}).
   *
   * @param schema the schema's name
   * @return this builder
   * @throws IllegalArgumentException if the name is not a valid schema name
   */
  public DashboardBuilder schema(String schema) {
    this.schema = PgLockSchema.checkName(schema);
    return this;
  }

  /**
   * Shows everything and takes no action: no action buttons, and every POST is refused (and
   * recorded). Default false.
   *
   * @param readOnly true for a read-only dashboard
   * @return this builder
   */
  public DashboardBuilder readOnly(boolean readOnly) {
    this.readOnly = readOnly;
    return this;
  }

  /**
   * Who may take which action (default: everyone who reaches the dashboard, so protect its path, or
   * bind it to localhost as {@code pglock dashboard} does).
   *
   * @param authorizer the authorizer
   * @return this builder
   */
  public DashboardBuilder authorizer(DashboardAuthorizer authorizer) {
    this.authorizer = Objects.requireNonNull(authorizer, "authorizer");
    return this;
  }

  /**
   * The secret that signs the anti-forgery tokens (default: random per dashboard). Several instances
   * of a service behind one URL, without sticky sessions, need the same secret, or a form served by
   * one is refused by another.
   *
   * @param secret at least 32 bytes
   * @return this builder
   * @throws IllegalArgumentException if shorter than 32 bytes
   */
  public DashboardBuilder csrfSecret(byte[] secret) {
    if (Objects.requireNonNull(secret, "secret").length < 32) {
      throw new IllegalArgumentException("the anti-forgery secret must be at least 32 bytes, not " + secret.length
          + ": use 32 random bytes, the same on every instance");
    }
    this.csrfSecret = secret.clone();
    return this;
  }

  /**
   * The time a page's queries may take together (default 5 s): a statement still running then is
   * cancelled by the server, and the page says so. Actions get six times as much.
   *
   * @param timeout from 1 s to 5 min
   * @return this builder
   * @throws IllegalArgumentException if out of range
   */
  public DashboardBuilder queryTimeout(Duration timeout) {
    if (timeout.compareTo(Duration.ofSeconds(1)) < 0 || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
      throw new IllegalArgumentException("queryTimeout must be from 1 s to 5 min, not " + timeout);
    }
    this.queryTimeout = timeout;
    return this;
  }

  /**
   * How often an open page refreshes its live parts (default 3 s; zero turns live updates off).
   * Each refresh runs the page's queries once.
   *
   * @param interval zero, or from 1 s to 1 h
   * @return this builder
   * @throws IllegalArgumentException if out of range
   */
  public DashboardBuilder refresh(Duration interval) {
    if (!interval.isZero()
        && (interval.compareTo(Duration.ofSeconds(1)) < 0 || interval.compareTo(Duration.ofHours(1)) > 0)) {
      throw new IllegalArgumentException("refresh must be zero or from 1 s to 1 h, not " + interval);
    }
    this.refresh = interval;
    return this;
  }

  /** {@return the dashboard} */
  public Dashboard build() {
    return new Dashboard(new Settings(dataSource, schema, readOnly, authorizer,
        csrfSecret != null ? csrfSecret : Csrf.randomSecret(), queryTimeout, refresh));
  }
}
