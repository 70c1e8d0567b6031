package io.pglock.spring.scheduling;

import io.pglock.schedule.RunContext;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Task;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Finds {@link PgScheduled} methods on every bean and turns each into a {@link Task}; the
 * scheduler's lifecycle registers them when the context starts. A bad attribute fails the context
 * at start, naming the method.
 */
public final class PgScheduledProcessor implements BeanPostProcessor, BeanFactoryAware, Ordered {
  private final List<Task> tasks = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, String> declaredBy = new HashMap<>();
  private UnaryOperator<String> resolver = s -> s;

  /** Creates the processor (Spring calls it). */
  public PgScheduledProcessor() {}

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    if (beanFactory instanceof ConfigurableBeanFactory c) {
      resolver = c::resolveEmbeddedValue;
    }
  }

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    Class<?> type = AopProxyUtils.ultimateTargetClass(bean);
    Map<Method, PgScheduled> found = MethodIntrospector.selectMethods(type,
        (MethodIntrospector.MetadataLookup<PgScheduled>) m -> AnnotatedElementUtils.findMergedAnnotation(m, PgScheduled.class));
    for (Map.Entry<Method, PgScheduled> e : found.entrySet()) {
      Task task = task(bean, e.getKey(), e.getValue());
      synchronized (declaredBy) {
        String where = e.getKey().getDeclaringClass().getName() + "." + e.getKey().getName() + " (bean " + beanName + ")";
        String earlier = declaredBy.putIfAbsent(task.name(), where);
        if (earlier != null) {
          throw new IllegalStateException("@PgScheduled task name \"" + task.name() + "\" is used by " + earlier
              + " and " + where + ": give one of them another name");
        }
      }
      tasks.add(task);
    }
    return bean;
  }

  /** {@return the tasks found so far} */
  public List<Task> tasks() {
    synchronized (tasks) {
      return List.copyOf(tasks);
    }
  }

  private Task task(Object bean, Method method, PgScheduled a) {
    String where = method.getDeclaringClass().getName() + "." + method.getName();
    Class<?>[] params = method.getParameterTypes();
    boolean takesContext = params.length == 1 && params[0] == RunContext.class;
    if (params.length > 1 || (params.length == 1 && !takesContext)) {
      throw new IllegalStateException("@PgScheduled method " + where
          + " must take no parameter or one io.pglock.schedule.RunContext");
    }
    String name = resolver.apply(a.name());
    if (name == null || name.isEmpty()) {
      name = (method.getDeclaringClass().getSimpleName() + "." + method.getName()).replaceAll("[^A-Za-z0-9._-]", "-");
    }
    Task.Builder b = Task.builder(name, schedule(method, a))
        .missedSlots(a.missedSlots())
        .overlap(a.overlap())
        .retryDisconnected(a.retryDisconnected());
    Duration missedAfter = Durations.parse(resolver.apply(a.missedAfter()), "missedAfter", method);
    if (missedAfter != null) {
      b.missedAfter(missedAfter);
    }
    Duration deadline = Durations.parse(resolver.apply(a.deadline()), "deadline", method);
    if (deadline != null) {
      b.deadline(deadline);
    }
    Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
    invocable.setAccessible(true);
    return b.build(run -> {
      try {
        if (takesContext) {
          invocable.invoke(bean, run);
        } else {
          invocable.invoke(bean);
        }
      } catch (InvocationTargetException e) {
        Throwable cause = e.getCause();
        if (cause instanceof Exception ex) {
          throw ex;
        }
        throw (Error) cause;
      }
    });
  }

  private Schedule schedule(Method method, PgScheduled a) {
    String cron = resolver.apply(a.cron());
    Duration rate = Durations.parse(resolver.apply(a.fixedRate()), "fixedRate", method);
    Duration delay = Durations.parse(resolver.apply(a.fixedDelay()), "fixedDelay", method);
    int set = (cron == null || cron.isEmpty() ? 0 : 1) + (rate == null ? 0 : 1) + (delay == null ? 0 : 1);
    if (set != 1) {
      throw new IllegalStateException("@PgScheduled on " + method.getDeclaringClass().getName() + "." + method.getName()
          + " needs exactly one of cron, fixedRate and fixedDelay (found " + set + ")");
    }
    String zone = resolver.apply(a.zone());
    if (cron != null && !cron.isEmpty()) {
      return Schedule.cron(cron, zone == null || zone.isEmpty() ? ZoneOffset.UTC : ZoneId.of(zone));
    }
    return rate != null ? Schedule.fixedRate(rate) : Schedule.fixedDelay(delay);
  }
}
