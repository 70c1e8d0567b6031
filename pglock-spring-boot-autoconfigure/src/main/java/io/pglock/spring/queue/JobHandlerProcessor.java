package io.pglock.spring.queue;

import io.pglock.queue.JobContext;
import io.pglock.queue.JobHandler;
import io.pglock.queue.TransactionalJobHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Finds {@link PgJobHandler} methods on every bean; {@link JobWorkersLifecycle} starts a worker per
 * queue with them. A method of the wrong shape, or two handlers for one kind and queue, fail the
 * context at start, naming both.
 */
public final class JobHandlerProcessor implements BeanPostProcessor {
  /**
   * One annotated method, ready to register on a worker.
   *
   * @param queue the queue its worker claims from
   * @param kind the job kind it handles
   * @param payloadType what the job's JSON is read into
   * @param handler calls the method (null for a method that takes a {@link Connection})
   * @param maxAttempts attempts for its kind, or 0 for the worker's default
   * @param where the method and bean, for messages
   * @param inTransaction calls a method that takes a {@link Connection}: in the transaction that records
   *     the job's success ({@link TransactionalJobHandler}); null otherwise
   */
  public record Registration(String queue, String kind, Class<?> payloadType, JobHandler<Object> handler,
      int maxAttempts, String where, TransactionalJobHandler<Object> inTransaction) {
    /**
     * A method without a {@link Connection} parameter.
     *
     * @param queue the queue its worker claims from
     * @param kind the job kind it handles
     * @param payloadType what the job's JSON is read into
     * @param handler calls the method
     * @param maxAttempts attempts for its kind, or 0 for the worker's default
     * @param where the method and bean, for messages
     */
    public Registration(String queue, String kind, Class<?> payloadType, JobHandler<Object> handler, int maxAttempts,
        String where) {
      this(queue, kind, payloadType, handler, maxAttempts, where, null);
    }
  }

  private final Map<String, Map<String, Registration>> byQueue = new LinkedHashMap<>();

  /** Creates the processor (Spring calls it). */
  public JobHandlerProcessor() {}

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    Class<?> type = AopProxyUtils.ultimateTargetClass(bean);
    Map<Method, PgJobHandler> found = MethodIntrospector.selectMethods(type,
        (MethodIntrospector.MetadataLookup<PgJobHandler>) m -> AnnotatedElementUtils.findMergedAnnotation(m, PgJobHandler.class));
    for (Map.Entry<Method, PgJobHandler> e : found.entrySet()) {
      add(registration(bean, beanName, e.getKey(), e.getValue()));
    }
    return bean;
  }

  private synchronized void add(Registration r) {
    Registration earlier = byQueue.computeIfAbsent(r.queue(), q -> new LinkedHashMap<>()).putIfAbsent(r.kind(), r);
    if (earlier != null) {
      throw new IllegalStateException("two @PgJobHandler methods for kind \"" + r.kind() + "\" on queue \"" + r.queue()
          + "\": " + earlier.where() + " and " + r.where() + "; a kind has one handler per queue");
    }
  }

  /** {@return the handlers found, by queue} */
  public synchronized Map<String, List<Registration>> handlers() {
    Map<String, List<Registration>> copy = new LinkedHashMap<>();
    byQueue.forEach((q, kinds) -> copy.put(q, new ArrayList<>(kinds.values())));
    return copy;
  }

  private static Registration registration(Object bean, String beanName, Method method, PgJobHandler a) {
    String where = method.getDeclaringClass().getName() + "." + method.getName() + " (bean " + beanName + ")";
    Class<?>[] params = method.getParameterTypes();
    // (payload), (payload, JobContext), and with a Connection last: run in the job's transaction
    boolean inTransaction = params.length >= 2 && params[params.length - 1] == Connection.class;
    int plain = inTransaction ? params.length - 1 : params.length;
    boolean withContext = plain == 2 && params[1] == JobContext.class;
    if (plain == 0 || plain > 2 || (plain == 2 && !withContext) || params[0] == JobContext.class
        || params[0] == Connection.class) {
      throw new IllegalStateException("@PgJobHandler method " + where + " must take (payload), (payload, JobContext),"
          + " (payload, Connection) or (payload, JobContext, Connection): the payload's type is what the job's JSON is"
          + " read into; a Connection last runs the method in the transaction that records the job's success");
    }
    if (a.maxAttempts() < 0) {
      throw new IllegalArgumentException("@PgJobHandler maxAttempts on " + where + " must be 0 (the worker's default) or more");
    }
    Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
    invocable.setAccessible(true);
    TransactionalJobHandler<Object> call = (payload, job, tx) -> {
      Object[] args = withContext ? new Object[] {payload, job, tx} : new Object[] {payload, tx};
      try {
        invocable.invoke(bean, inTransaction ? args : java.util.Arrays.copyOf(args, args.length - 1));
      } catch (InvocationTargetException e) {
        Throwable cause = e.getCause();
        if (cause instanceof Exception ex) {
          throw ex;
        }
        throw (Error) cause;
      }
    };
    Class<?> payloadType = params[0].isPrimitive() ? boxed(params[0]) : params[0];
    if (inTransaction) {
      return new Registration(a.queue(), a.kind(), payloadType, null, a.maxAttempts(), where, call);
    }
    return new Registration(a.queue(), a.kind(), payloadType, (payload, job) -> call.handle(payload, job, null),
        a.maxAttempts(), where);
  }

  private static Class<?> boxed(Class<?> primitive) {
    return java.lang.invoke.MethodType.methodType(primitive).wrap().returnType();
  }
}
