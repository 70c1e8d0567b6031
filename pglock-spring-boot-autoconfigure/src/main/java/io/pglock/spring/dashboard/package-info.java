/**
 * pglock's web dashboard in a Spring application: what the starter adds to the dashboard's servlet,
 * such as Spring Security's anti-forgery token in its forms.
 */
package io.pglock.spring.dashboard;
