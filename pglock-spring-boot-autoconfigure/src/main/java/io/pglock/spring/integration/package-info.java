/** Spring Integration's lock registry on pglock's session locks. */
package io.pglock.spring.integration;
