/** One HTTP exchange, whichever server carries it (JDK HttpServer or a servlet container). */
package io.pglock.dashboard.internal.http;
