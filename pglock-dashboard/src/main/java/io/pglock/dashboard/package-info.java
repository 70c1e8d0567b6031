/**
 * A web dashboard over pglock's locks, lock history, elections, members and ownership, scheduled
 * tasks, queues and jobs, with actions on tasks and jobs.
 *
 * <p>Build a {@link io.pglock.dashboard.Dashboard} on a {@code DataSource} and mount it: as a JDK
 * {@code HttpHandler} ({@link io.pglock.dashboard.Dashboard#httpHandler()}), as a servlet
 * ({@link io.pglock.dashboard.DashboardServlet}), or on a server of its own
 * ({@link io.pglock.dashboard.Dashboard#serve}). Pages are rendered on the server from templates
 * compiled into this jar, with one small script for live updates; nothing is fetched from elsewhere.
 */
package io.pglock.dashboard;
