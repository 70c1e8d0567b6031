package io.pglock.fault;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Linux network namespace of a test's own, joined to the host by a veth pair: a process started
 * with {@link #commandPrefix()} ({@code ip netns exec <name>}) reaches the host only through it,
 * at {@link #hostAddress()}, and {@link #partition()} cuts it off <b>silently</b>: every packet in
 * and out of the namespace is dropped by a firewall rule inside it ({@code iptables -j DROP} on
 * INPUT and OUTPUT), so that neither side gets an error, a reset or an ICMP message. Sockets stay
 * open, writes are accepted and buffered, reads and new connects just wait: a cable pulled between
 * the process and the server. {@link #heal()} removes the rules.
 *
 * <p>Why a firewall rule: {@code ip link set ... down} is not silent (a connect fails at once with
 * ENETUNREACH), this kernel has no {@code tc} classifiers or {@code netem}, and taking the host end
 * down would remove the host's route to the namespace, so the server's replies would follow the
 * default route off this machine.
 *
 * <p>Needs root, {@code ip} (iproute2) and {@code iptables} (Debian package {@code iptables},
 * installed by {@code .ci/run}); {@link #unavailableReason()} says why not. Names carry this JVM's
 * pid, so that {@link #removeStale()} can delete what a killed test run left behind. Addresses are
 * in a /24 of 10.0.0.0/8 not used on this host ({@link #freeSubnet()}): traffic stays between this
 * host and namespaces the test made.
 */
public final class NetworkNamespace implements AutoCloseable {
  /** The prefix of every namespace this class creates, followed by the creating JVM's pid. */
  private static final String PREFIX = "pglock-ns-";
  private static final Pattern OURS = Pattern.compile(PREFIX + "(\\d+)-[0-9a-f]+-\\d+");
  private static final long COMMAND_TIMEOUT_S = 30;

  private final String name;
  private final String hostInterface;
  private final String hostAddress;
  private final String address;
  private volatile boolean partitioned;

  private NetworkNamespace(String name, String hostInterface, String hostAddress, String address) {
    this.name = name;
    this.hostInterface = hostInterface;
    this.hostAddress = hostAddress;
    this.address = address;
  }

  /**
   * Why namespaces cannot be made here, or empty if they can: this JVM is not root, or {@code ip}
   * or {@code iptables} is missing.
   */
  public static Optional<String> unavailableReason() {
    if (!"root".equals(System.getProperty("user.name"))) {
      return Optional.of("network namespaces need root (this JVM runs as " + System.getProperty("user.name") + ")");
    }
    if (executable("ip").isEmpty()) {
      return Optional.of("no ip command (iproute2)");
    }
    if (executable("iptables").isEmpty()) {
      return Optional.of("no iptables (Debian package iptables): nothing here drops packets silently "
          + "(ip link down fails connects at once with ENETUNREACH; this kernel has no tc classifiers)");
    }
    try {
      Result r = run(List.of("ip", "netns", "list"));
      if (r.status != 0) {
        return Optional.of("ip netns does not work here: " + r.output);
      }
    } catch (IOException e) {
      return Optional.of("ip netns does not work here: " + e);
    }
    return Optional.empty();
  }

  /**
   * A /24 of 10.0.0.0/8 that no address or route of this host mentions, as its first three octets
   * ({@code "10.213.7"}).
   */
  public static String freeSubnet() throws IOException {
    String used = run(List.of("ip", "-4", "-o", "addr")).output + run(List.of("ip", "-4", "route", "show", "table", "all"))
        .output;
    for (int i = 0; i < 100; i++) {
      String net = "10." + ThreadLocalRandom.current().nextInt(200, 250) + "." + ThreadLocalRandom.current().nextInt(256);
      if (!used.contains(net + ".")) {
        return net;
      }
    }
    throw new IOException("no free 10.x.y.0/24 found for test namespaces:\n" + used);
  }

  /**
   * Creates a namespace with lo up and a veth pair: {@code subnet.(4*index+1)/30} on the host end,
   * {@code subnet.(4*index+2)/30} inside.
   *
   * @param subnet the first three octets of a free /24 ({@link #freeSubnet()})
   * @param index 0 to 63: which /30 of it
   * @throws IOException if a command fails; whatever was made is removed again
   */
  public static NetworkNamespace create(String subnet, int index) throws IOException {
    String tag = Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0x1000000));
    String name = PREFIX + ProcessHandle.current().pid() + "-" + tag + "-" + index;
    String hostIf = "pgl" + tag + "h" + index; // interface names: at most 15 characters
    String nsIf = "pgl" + tag + "n" + index;
    NetworkNamespace ns = new NetworkNamespace(name, hostIf, subnet + "." + (4 * index + 1),
        subnet + "." + (4 * index + 2));
    boolean done = false;
    try {
      check("ip", "netns", "add", name);
      check("ip", "link", "add", hostIf, "type", "veth", "peer", "name", nsIf);
      check("ip", "link", "set", nsIf, "netns", name);
      check("ip", "addr", "add", ns.hostAddress + "/30", "dev", hostIf);
      check("ip", "link", "set", hostIf, "up");
      ns.exec("ip", "link", "set", "lo", "up");
      ns.exec("ip", "addr", "add", ns.address + "/30", "dev", nsIf);
      ns.exec("ip", "link", "set", nsIf, "up");
      ns.exec("iptables", "-w", "-S"); // the firewall works in the namespace
      done = true;
      return ns;
    } finally {
      if (!done) {
        ns.close();
      }
    }
  }

  /** Deletes the namespaces that this class made in JVMs that are gone (a killed test run). */
  public static void removeStale() {
    try {
      for (String line : run(List.of("ip", "netns", "list")).output.split("\n")) {
        String ns = line.trim().split(" ")[0];
        Matcher m = OURS.matcher(ns);
        if (m.matches() && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty()) {
          run(List.of("ip", "netns", "delete", ns));
        }
      }
    } catch (IOException | RuntimeException e) {
      System.err.println("NetworkNamespace: could not remove stale namespaces: " + e);
    }
  }

  /** {@return the namespace's name} */
  public String name() {
    return name;
  }

  /** {@return the host end's address: where a process inside reaches the host} */
  public String hostAddress() {
    return hostAddress;
  }

  /** {@return the address inside the namespace} */
  public String address() {
    return address;
  }

  /** {@return the words that run a command inside: {@code ip netns exec <name>} (it execs: same pid)} */
  public List<String> commandPrefix() {
    return List.of(executable("ip").orElse("ip"), "netns", "exec", name);
  }

  /** Drops every packet in and out of the namespace, silently. */
  public void partition() throws IOException {
    exec("iptables", "-w", "-A", "INPUT", "-j", "DROP");
    exec("iptables", "-w", "-A", "OUTPUT", "-j", "DROP");
    partitioned = true;
  }

  /** Lets packets through again. */
  public void heal() throws IOException {
    exec("iptables", "-w", "-F", "INPUT");
    exec("iptables", "-w", "-F", "OUTPUT");
    partitioned = false;
  }

  /** {@return whether {@link #partition()} is in force} */
  public boolean isPartitioned() {
    return partitioned;
  }

  /**
   * Deletes the namespace and the veth pair. Kill the processes inside first: a namespace lives on,
   * unnamed, while a process is in it. Never throws.
   */
  @Override
  public void close() {
    try {
      run(List.of("ip", "netns", "delete", name));
      run(List.of("ip", "link", "delete", hostInterface)); // gone with the namespace, unless it was never moved
    } catch (IOException e) {
      System.err.println("NetworkNamespace: could not delete " + name + ": " + e);
    }
  }

  @Override
  public String toString() {
    return "NetworkNamespace[" + name + ", " + address + " <-> host " + hostAddress
        + (partitioned ? ", partitioned" : "") + "]";
  }

  private void exec(String... command) throws IOException {
    List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", name));
    full.addAll(List.of(command));
    check(full.toArray(String[]::new));
  }

  private static void check(String... command) throws IOException {
    Result r = run(List.of(command));
    if (r.status != 0) {
      throw new IOException(String.join(" ", command) + " failed (" + r.status + "): " + r.output);
    }
  }

  private record Result(int status, String output) {}

  /** Runs a command (its programs looked up by {@link #executable}), its output and errors together. */
  private static Result run(List<String> command) throws IOException {
    List<String> resolved = new ArrayList<>(command);
    for (int i = 0; i < resolved.size(); i++) {
      String word = resolved.get(i);
      if (word.equals("ip") || word.equals("iptables")) {
        resolved.set(i, executable(word).orElse(word));
      }
    }
    Process p = new ProcessBuilder(resolved).redirectErrorStream(true).start();
    p.getOutputStream().close();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
      try {
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        return "(output unreadable: " + e + ")";
      }
    });
    try {
      if (!p.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException("timed out after " + COMMAND_TIMEOUT_S + " s: " + String.join(" ", command));
      }
      return new Result(p.exitValue(), out.get(COMMAND_TIMEOUT_S, TimeUnit.SECONDS));
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted: " + String.join(" ", command), e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IOException("output of " + String.join(" ", command) + " unreadable: " + e, e);
    }
  }

  /** The path of a program in /usr/sbin, /sbin, /usr/bin, /bin or PATH. */
  private static Optional<String> executable(String program) {
    List<String> dirs = new ArrayList<>(List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin"));
    String path = System.getenv("PATH");
    if (path != null) {
      dirs.addAll(List.of(path.split(":")));
    }
    for (String dir : dirs) {
      Path p = Path.of(dir, program);
      if (!dir.isEmpty() && Files.isExecutable(p)) {
        return Optional.of(p.toString());
      }
    }
    return Optional.empty();
  }
}
