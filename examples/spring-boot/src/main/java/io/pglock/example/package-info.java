/** A small Spring Boot service on pglock's starter (run it with examples/spring-boot/run.sh). */
package io.pglock.example;
