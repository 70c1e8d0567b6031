/** What each page shows: plain records the compiled templates render. */
package io.pglock.dashboard.internal.view;
