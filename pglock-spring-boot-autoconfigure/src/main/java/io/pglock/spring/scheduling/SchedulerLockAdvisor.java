package io.pglock.spring.scheduling;

import io.pglock.PgLocks;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import java.lang.annotation.Annotation;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.Ordered;
import org.springframework.util.ClassUtils;
import java.util.function.UnaryOperator;

/**
 * Proxies beans with {@link SchedulerLock} methods (or ShedLock's own
 * {@code net.javacrumbs.shedlock.spring.annotation.SchedulerLock}, when shedlock-spring is still on
 * the class path) so that each call goes through {@link SchedulerLockInterceptor}. Runs before Spring's {@code @Scheduled} post-processor, which
 * then schedules calls on the proxy.
 */
public final class SchedulerLockAdvisor extends AbstractBeanFactoryAwareAdvisingPostProcessor
    implements DisposableBean {
  private static final long serialVersionUID = 1L;
  private final transient ObjectProvider<PgLocks> locks;
  private transient SchedulerLockInterceptor interceptor;

  /**
   * Creates the post-processor.
   *
   * @param locks the node's instance, looked up at the first call
   */
  public SchedulerLockAdvisor(ObjectProvider<PgLocks> locks) {
    this.locks = locks;
    setProxyTargetClass(true);
    setBeforeExistingAdvisors(true);
    setOrder(Ordered.LOWEST_PRECEDENCE - 100);
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    super.setBeanFactory(beanFactory);
    UnaryOperator<String> resolver = UnaryOperator.identity();
    if (beanFactory instanceof ConfigurableBeanFactory configurable) {
      resolver = configurable::resolveEmbeddedValue;
    }
    interceptor = new SchedulerLockInterceptor(locks, resolver);
    this.advisor = new DefaultPointcutAdvisor(pointcut(beanFactory), interceptor);
  }

  /** pglock's annotation, and ShedLock's own when shedlock-spring is on the class path. */
  @SuppressWarnings("unchecked")
  private static Pointcut pointcut(BeanFactory beanFactory) {
    ComposablePointcut pointcut = new ComposablePointcut(AnnotationMatchingPointcut.forMethodAnnotation(SchedulerLock.class));
    ClassLoader loader = beanFactory instanceof ConfigurableBeanFactory c ? c.getBeanClassLoader() : null;
    if (ClassUtils.isPresent(SchedulerLockInterceptor.SHEDLOCK_ANNOTATION, loader)) {
      Class<? extends Annotation> shedlock = (Class<? extends Annotation>) ClassUtils.resolveClassName(
          SchedulerLockInterceptor.SHEDLOCK_ANNOTATION, loader);
      pointcut.union(AnnotationMatchingPointcut.forMethodAnnotation(shedlock));
    }
    return pointcut;
  }

  @Override
  public void destroy() {
    if (interceptor != null) {
      interceptor.close();
    }
  }
}
