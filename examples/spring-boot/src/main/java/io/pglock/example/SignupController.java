package io.pglock.example;

import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /signups?email=...[&fail=true]}. */
@RestController
class SignupController {
  private final Signups signups;

  SignupController(Signups signups) {
    this.signups = signups;
  }

  @PostMapping("/signups")
  ResponseEntity<Map<String, Object>> signUp(@RequestParam String email,
      @RequestParam(defaultValue = "false") boolean fail) {
    try {
      return ResponseEntity.ok(Map.of("email", email, "welcomeJob", signups.signUp(email, fail)));
    } catch (IllegalStateException e) {
      return ResponseEntity.unprocessableEntity().body(Map.of("error", e.getMessage()));
    }
  }
}
