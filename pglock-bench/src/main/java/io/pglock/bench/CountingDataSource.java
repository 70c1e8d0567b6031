package io.pglock.bench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Counts, on the client, what a contender asks its database to do: every {@code execute*} call of
 * its statements, and every {@code commit} and {@code rollback}, through JDBC proxies around a data
 * source. The proxies pass everything on, {@code unwrap} included, so that pglock still reaches
 * pgjdbc's connection (it runs its statements on the proxy, as on a pool's). B8 reads the counts of
 * a standing fleet to give each system's steady-state cost per standby and per leader.
 */
final class CountingDataSource {
  static final AtomicLong EXECUTES = new AtomicLong();
  static final AtomicLong ENDS = new AtomicLong();

  private CountingDataSource() {}

  static DataSource wrap(DataSource ds) {
    return proxy(DataSource.class, ds);
  }

  @SuppressWarnings("unchecked")
  private static <T> T proxy(Class<T> type, Object target) {
    InvocationHandler h = (p, m, args) -> invoke(target, m, args);
    return (T) Proxy.newProxyInstance(CountingDataSource.class.getClassLoader(), new Class<?>[] {type}, h);
  }

  private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
    String name = m.getName();
    if (target instanceof Statement && name.startsWith("execute")) {
      EXECUTES.incrementAndGet();
    } else if (target instanceof Connection && (name.equals("commit") || name.equals("rollback"))) {
      ENDS.incrementAndGet();
    }
    Object result;
    try {
      result = m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
    // wrap what leads to statements; unwrap() and everything else come back as they are
    if (result instanceof Connection c && !name.equals("unwrap")) {
      return proxy(Connection.class, c);
    }
    if (result instanceof CallableStatement s) {
      return proxy(CallableStatement.class, s);
    }
    if (result instanceof PreparedStatement s) {
      return proxy(PreparedStatement.class, s);
    }
    if (result instanceof Statement s && !name.equals("unwrap")) {
      return proxy(Statement.class, s);
    }
    return result;
  }
}
