package io.pglock.queue.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pglock.queue.JsonMapper;

/** The default {@link JsonMapper}: a Jackson {@code ObjectMapper} with the modules on the class path. */
public final class JacksonJsonMapper implements JsonMapper {
  private final ObjectMapper mapper;

  private JacksonJsonMapper(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** {@return a mapper on a new ObjectMapper with the registered modules (java.time and others, if present)} */
  public static JacksonJsonMapper create() {
    return new JacksonJsonMapper(new ObjectMapper().findAndRegisterModules());
  }

  @Override
  public String write(Object payload) {
    try {
      return mapper.writeValueAsString(payload);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("the payload (" + payload.getClass().getName() + ") cannot be written as "
          + "JSON by Jackson: " + e.getOriginalMessage() + "; make it a record or bean Jackson can write, or plug in "
          + "your own JsonMapper", e);
    }
  }

  @Override
  public <T> T read(String json, Class<T> type) {
    try {
      return mapper.readValue(json, type);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("the job's payload cannot be read as " + type.getName() + " by Jackson: "
          + e.getOriginalMessage(), e);
    }
  }
}
