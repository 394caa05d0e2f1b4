import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Start-up with `--unlock`: the password is gone from the daemon's memory once it serves, and
/// a damaged `login` neither stops the daemon nor gets replaced.
@Suite(.timeLimit(.minutes(5))) struct StartupRecoveryTests {
    /// What runs in a user namespace of its own, as its root: a private bus, cofferd started
    /// with `--unlock` (the password on its stdin), a real call through secret-tool, then a
    /// scan of every readable mapping of cofferd's memory for the password's first bytes.
    /// cofferd is non-dumpable, so that no other program of its user reads its memory; only a
    /// process with CAP_SYS_PTRACE over it may, and in a namespace of its own an unprivileged
    /// user has that over what runs there (root has it anyway).
    static let scan = #"""
        set -eu
        dir=$1 cofferd=$2 password=$3
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
        python3 - "$daemon" "${password%%-*}-" <<'EOF'
        import sys
        pid, needle = sys.argv[1], sys.argv[2].encode()
        regions = 0
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
                if needle in data:
                    print("found")
                    sys.exit(0)
        print(f"clean {regions}")
        EOF
        """#

    /// Once cofferd serves, the `--unlock` password is nowhere in its memory (secure pool
    /// included): it was wiped as soon as `login` was unlocked.
    @Test func theUnlockPasswordIsWipedOnceServing() throws {
        let password = "unlockwipe-" + UUID().uuidString
        let directory = NSTemporaryDirectory() + "cofferd-wipe-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let unshare = try #require(Executables.inPath("unshare"))
        let child = try ChildProcess(unshare, arguments: ["--user", "--map-root-user", "--", "/bin/bash", "-c", Self.scan, "scan",
                                                          directory, try DaemonFixture.cofferdPath, password],
                                     environment: ["PATH": "/usr/bin:/bin", "HOME": directory])
        let result = child.wait(timeout: 120)
        let log = (try? String(contentsOfFile: directory + "/daemon.log", encoding: .utf8)) ?? ""
        #expect(result.exitCode == 0, "\(result)\ncofferd log:\n\(log)")
        let words = result.stdout.split(separator: " ")
        #expect(words.first == "clean", "the --unlock password is still in cofferd's memory: \(result)")
        #expect((words.last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0) > 5,
                "could read only some regions of cofferd: \(result)")
    }

    /// A `login` file damaged beyond opening: cofferd --unlock still starts, serves another
    /// collection, reports `login` as damaged when asked for it, and never writes over it.
    @Test func aDamagedLoginDoesNotStopTheDaemon() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let session = try f.client.library.openSession()
        let other = try f.client.library.createCollection(label: "Other", password: SecureBytes("other password"), session: session)
        let kept = try f.client.createItem(in: other, label: "kept", attributes: ["where": "other"], secret: "safe", session: session)
        #expect(f.stopDaemon()?.exitCode == 0)

        let login = f.dataDir + "/login.coffer"
        var bytes = try #require(FileManager.default.contents(atPath: login))
        for offset in 8..<40 { bytes[offset] ^= 0xFF }
        try bytes.write(to: URL(fileURLWithPath: login))

        try f.startDaemon(unlock: true)
        #expect(eventually { f.daemonLog.contains("login collection is damaged") }, "\(f.daemonLog)")
        let c = f.client!
        try c.library.unlock(other, password: SecureBytes("other password"), session: try c.library.openSession())
        let fresh = try c.library.openSession()
        #expect(try c.secretBytes(of: kept, session: fresh) == Array("safe".utf8))
        #expect(try c.library.search(["where": "other"]).unlocked == [kept])
        // Every access to login says it is damaged.
        for call in [{ _ = try c.call(ServiceInterface.Unlock.self, .init(objects: [SecretPath.login])) },
                     { _ = try c.library.properties(of: CollectionInterface.name, on: SecretPath.login) },
                     { _ = try c.createItem(label: "new", attributes: ["a": "b"], secret: "x", session: fresh) }] {
            let error = expectDBusError(DBusError.Name.failed) { try call() }
            #expect(error?.message.contains("damaged") == true, "\(String(describing: error))")
        }
        #expect(FileManager.default.contents(atPath: login) == bytes, "the damaged login file was changed")
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
    }
}
