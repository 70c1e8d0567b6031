package io.pglock.queue;

/**
 * Turns payloads into JSON and back: plug in the JSON library the application already uses with
 * {@link JobQueueBuilder#jsonMapper(JsonMapper)}. The default is Jackson's {@code ObjectMapper}
 * ({@link #jackson()}).
 */
public interface JsonMapper {
  /**
   * {@return the JSON text of a payload} @throws RuntimeException if it cannot be written
   *
   * @param payload the payload object
   */
  String write(Object payload);

  /**
   * {@return the payload read from JSON text} @throws RuntimeException if it cannot be read
   *
   * @param <T> the payload's type
   * @param json the JSON text
   * @param type the payload's class
   */
  <T> T read(String json, Class<T> type);

  /** {@return a mapper on a plain Jackson {@code ObjectMapper} with the modules found on the class path} */
  static JsonMapper jackson() {
    return io.pglock.queue.internal.JacksonJsonMapper.create();
  }
}
