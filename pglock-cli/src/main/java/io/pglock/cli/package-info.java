/**
 * The {@code pglock} command-line tool ({@link io.pglock.cli.PglockCommand}) and its subcommands,
 * starting with {@code demo} ({@link io.pglock.cli.DemoCommand}). Output goes to the picocli
 * command line's writers; SLF4J logging goes through slf4j-simple at WARN.
 */
package io.pglock.cli;
