package io.pglock.dashboard.internal;

import io.pglock.dashboard.DashboardAuthorizer;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * A dashboard's settings, as its builder checked them.
 *
 * @param dataSource where the pages read and the actions write
 * @param schema pglock's schema
 * @param readOnly true to take no actions
 * @param authorizer who may take which action
 * @param csrfSecret the anti-forgery secret
 * @param queryTimeout the bound on each statement
 * @param refresh how often live parts of a page refresh (zero: never)
 */
public record Settings(DataSource dataSource, String schema, boolean readOnly, DashboardAuthorizer authorizer,
    byte[] csrfSecret, Duration queryTimeout, Duration refresh) {}
