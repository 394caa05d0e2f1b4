import CofferTestSupport
import Foundation
import Testing

/// Reads the real cofferd's memory for what must not be there. cofferd is non-dumpable, so
/// that no other program of its user reads its memory; only a process with CAP_SYS_PTRACE over
/// it may, and in a user namespace of its own an unprivileged user has that over what runs
/// there (root has it anyway). So everything runs in one, as its root: a private bus, cofferd
/// started with `--unlock` (the password on its stdin), a real call through secret-tool (so
/// that it has served), the test's own client commands, then a scan of every readable mapping
/// of cofferd's memory.
enum MemoryScan {
    struct Result: CustomStringConvertible {
        /// The needles found in cofferd's memory.
        let found: [String]
        /// How many mappings were read.
        let regions: Int
        let run: ChildResult
        let log: String
        var description: String { "found \(found) in \(regions) regions; \(run)\ncofferd log:\n\(log)" }
    }

    static let script = #"""
        set -eu
        dir=$1 cofferd=$2 password=$3
        shift 3
        cat > "$dir/bus.conf" <<EOF
        <busconfig><type>session</type><listen>unix:dir=$dir</listen><auth>EXTERNAL</auth>
        <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
        </busconfig>
        EOF
        dbus-daemon --config-file="$dir/bus.conf" --nofork --print-address=1 > "$dir/address" 2>/dev/null &
        bus=$!
        trap 'kill $bus ${daemon:-} 2>/dev/null || true' EXIT
        for _ in $(seq 100); do [ -s "$dir/address" ] && break; sleep 0.1; done
        export DBUS_SESSION_BUS_ADDRESS="$(head -n1 "$dir/address")" LANG=C.UTF-8
        printf '%s\n' "$password" | "$cofferd" --foreground --unlock --data-dir "$dir/data" 2> "$dir/daemon.log" &
        daemon=$!
        for _ in $(seq 300); do
            printf 'anything' | secret-tool store --label=check wipe check 2>/dev/null && break
            sleep 0.1
        done
        secret-tool lookup wipe check > /dev/null
        bash "$dir/client.sh" > "$dir/client.log" 2>&1
        python3 - "$daemon" "$@" <<'EOF'
        import sys
        pid, needles = sys.argv[1], [n.encode() for n in sys.argv[2:]]
        regions, found = 0, set()
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as memory:
            for line in maps:
                fields = line.split()
                if not fields[1].startswith("r") or line.rstrip().endswith("[vvar]"):
                    continue
                start, end = (int(bound, 16) for bound in fields[0].split("-"))
                try:
                    memory.seek(start)
                    data = memory.read(end - start)
                except OSError:
                    continue
                regions += 1
                found.update(n for n in needles if n in data)
        print(regions, *sorted(n.decode() for n in found))
        EOF
        """#

    /// Runs cofferd with `password`, then `client` (bash; DBUS_SESSION_BUS_ADDRESS set), then
    /// looks for each of `needles` in cofferd's memory.
    static func run(password: String, client: String = "true", needles: [String]) throws -> Result {
        let directory = NSTemporaryDirectory() + "cofferd-scan-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A file, not the environment: cofferd inherits the environment, and the client's text
        // holds what is looked for.
        try client.write(toFile: directory + "/client.sh", atomically: true, encoding: .utf8)
        let unshare = try #require(Executables.inPath("unshare"))
        let run = try ChildProcess(unshare, arguments: ["--user", "--map-root-user", "--", "/bin/bash", "-c", script, "scan",
                                                        directory, try DaemonFixture.cofferdPath, password] + needles,
                                   environment: ["PATH": "/usr/bin:/bin", "HOME": directory]).wait(timeout: 120)
        let log = (try? String(contentsOfFile: directory + "/daemon.log", encoding: .utf8)) ?? ""
        let clientLog = (try? String(contentsOfFile: directory + "/client.log", encoding: .utf8)) ?? ""
        #expect(run.exitCode == 0, "\(run)\nclient:\n\(clientLog)\ncofferd log:\n\(log)")
        let words = run.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        let regions = words.first.flatMap { Int($0) } ?? 0
        #expect(regions > 5, "could read only \(regions) regions of cofferd: \(run)")
        return Result(found: Array(words.dropFirst()), regions: regions, run: run, log: log + "\nclient:\n" + clientLog)
    }
}
