package io.pglock.spring.leader;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a bean only while this node leads an election. The bean implements
 * {@link org.springframework.context.Lifecycle}: the starter calls {@code start()} when this node is
 * elected and {@code stop()} when its term ends (another node took over, the connection or lease
 * was lost, or the context is closing), before a successor can be elected except where the term
 * was lost to a dead connection (then the fencing token, in the event, covers the gap). Every node
 * with the bean stands in the election; exactly one runs it.
 *
 * <p>A {@link org.springframework.context.SmartLifecycle} bean must return {@code false} from
 * {@code isAutoStartup()}, or the context would start it on every node. Listen for
 * {@link LeadershipChangedEvent} to follow the election without a bean.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface LeaderOnly {
  /** {@return the election's name: beans with the same name run together, on the leader} */
  String value();
}
