/** pglock's health check, and its adapters to Spring Boot 3's and 4's health APIs. */
package io.pglock.spring.health;
