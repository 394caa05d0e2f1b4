// swift-tools-version: 6.0
// Coffer: a freedesktop Secret Service provider.
//
// Layers, bottom to top (dependencies point down only):
//   C shims:        CGcrypt, CDBus, CPAM (system libraries), CTSS2 (tpm2-tss, loaded on first use), CProcess (process and thread
//                   calls), CPAMCalls (libpam's pam_sm_* entry points, keeping its pointers)
//   wrappers:       SystemKit (system calls: file descriptors, child processes, inotify;
//                   the hex and percent escapers), CofferCrypto (libgcrypt), DBusKit (libdbus-1),
//                   TPMKit (a TPM 2.0 through tpm2-tss: seal and unseal)
//   protocol:       SecretServiceProtocol (the org.freedesktop.Secret.* interfaces, typed) and
//                   SecretServiceClient (a client library of any provider): over DBusKit and
//                   CofferCrypto alone, they know nothing of Coffer's model or store
//   core and store: CofferCore (Keychain model), CofferStore (encrypted files)
//   formats:        GnomeKeyringFormat (gnome-keyring's files), CofferBackup (encrypted backups)
//   object layer:   SecretService (the server's objects, over the protocol and the core);
//                   CofferImport (into the store, from keyring files or any provider's bus)
//   login:          LoginUnlock (what a login does, no Foundation), PAMCoffer (the PAM module:
//                   what Swift sees of a PAM call, pointer-free, over LoginUnlock and CPAMCalls)
//   executables:    cofferd (daemon), coffer (CLI)
import PackageDescription

let package = Package(
    name: "Coffer",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "SecretServiceClient", targets: ["SecretServiceClient"]),
        .executable(name: "cofferd", targets: ["cofferd"]),
        .executable(name: "coffer", targets: ["coffer"]),
        // pam_coffer: unlocks the default collection at login (link it with -static-stdlib to install).
        .library(name: "pam_coffer", type: .dynamic, targets: ["PAMCoffer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // C shims: system libraries plus static inline wrappers for what Swift cannot call.
        .systemLibrary(name: "CGcrypt", pkgConfig: "libgcrypt",
                       providers: [.apt(["libgcrypt20-dev"])]),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1",
                       providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CPAM", providers: [.apt(["libpam0g-dev"])]),
        .target(name: "CTSS2"),   // tpm2-tss, loaded on first use (its headers: libtss2-dev)
        .target(name: "CProcess"),

        // Safe Swift wrappers.
        .target(name: "SystemKit", dependencies: ["CProcess"]),
        .target(name: "CofferCrypto", dependencies: ["CGcrypt", "CProcess", "SystemKit"]),
        .target(name: "DBusKit", dependencies: ["CDBus", "CofferCrypto", "SystemKit"]),
        .target(name: "TPMKit", dependencies: ["CTSS2", "CofferCrypto"]),

        // Core model and encrypted store.
        .target(name: "CofferCore", dependencies: ["CofferCrypto", "SystemKit"]),
        .target(name: "CofferStore", dependencies: ["CofferCore", "CofferCrypto", "SystemKit", "TPMKit"]),

        // The Secret Service protocol, typed once: interfaces, typed arguments, the wire secret,
        // errors and paths, shared by the server and the client library.
        .target(name: "SecretServiceProtocol", dependencies: ["CofferCrypto", "DBusKit"]),

        // gnome-keyring's keyring files, both formats (for import and export).
        .target(name: "GnomeKeyringFormat", dependencies: ["CofferCrypto", "SystemKit"]),

        // Coffer's encrypted backup format (export, and import backup).
        .target(name: "CofferBackup", dependencies: ["CofferCore", "CofferCrypto"]),

        // Importing into Coffer's store: from gnome-keyring's files, or any provider over the bus.
        .target(name: "CofferImport", dependencies: ["CofferCore", "CofferCrypto", "DBusKit", "GnomeKeyringFormat",
                                                     "SecretServiceClient", "SecretServiceProtocol"]),

        // A client of any Secret Service provider, on the same protocol module.
        .target(name: "SecretServiceClient", dependencies: ["SecretServiceProtocol", "CofferCrypto", "DBusKit"]),

        // The org.freedesktop.Secret.* object layer.
        .target(name: "SecretService", dependencies: ["SecretServiceProtocol", "CofferCore", "CofferCrypto", "DBusKit", "SystemKit"]),

        // The PAM module (no Foundation): what a login does (LoginUnlock), under libpam's entry
        // points (CPAMCalls, in C: they keep libpam's pointers for the call; PAMCoffer: what
        // Swift sees of the call, without a pointer).
        .target(name: "LoginUnlock", dependencies: ["SystemKit"]),
        .target(name: "CPAMCalls", dependencies: ["CPAM"], linkerSettings: [.linkedLibrary("pam")]),
        .target(name: "PAMCoffer", dependencies: ["CPAMCalls", "LoginUnlock"]),

        // Executables.
        .executableTarget(name: "cofferd", dependencies: [
            "SecretService", "SecretServiceProtocol", "CofferCore", "CofferStore", "CofferCrypto", "DBusKit", "SystemKit", "TPMKit",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "coffer", dependencies: [
            "CofferCore", "CofferStore", "CofferCrypto", "DBusKit", "SystemKit", "SecretServiceProtocol",
            "SecretServiceClient", "CofferImport", "CofferBackup", "GnomeKeyringFormat", "TPMKit",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Benchmarks (not tests): `swift run -c release coffer-bench` (core and store),
        // `coffer-bus-bench` (the daemon over a bus, beside gnome-keyring),
        // `coffer-unlock-flood` (a flood of wrong passwords) and `coffer-sync-bench` (syncing
        // through Syncthing, beside Syncthing carrying a plain file).
        .executableTarget(name: "coffer-bench", dependencies: ["CofferCore", "CofferStore", "CofferCrypto", "TPMKit"],
                          path: "Benchmarks/CofferBench"),
        .executableTarget(name: "coffer-unlock-flood", dependencies: ["SecretServiceClient", "SecretServiceProtocol", "CofferCrypto",
                                                                    "DBusKit", "SystemKit", "CofferTestSupport"],
                          path: "Benchmarks/UnlockFlood"),
        .executableTarget(name: "coffer-bus-bench", dependencies: ["SecretServiceClient", "SecretServiceProtocol", "CofferCore",
                                                                 "CofferCrypto", "DBusKit", "SystemKit", "CofferTestSupport"],
                          path: "Benchmarks/BusBench"),
        .executableTarget(name: "coffer-sync-bench", dependencies: ["SecretServiceClient", "SecretServiceProtocol", "CofferCore",
                                                                  "CofferStore", "CofferCrypto", "DBusKit", "SystemKit", "CofferTestSupport"],
                          path: "Benchmarks/SyncBench"),

        // Test support (used by test targets only): private buses and child processes.
        .target(name: "CofferTestSupport", dependencies: ["DBusKit", "SystemKit", "SecretServiceClient", "CofferCrypto"]),

        // Tests, and tools the tests run as child processes: a pinentry that answers from a
        // script, and the writer the store's crash and concurrency tests run.
        .executableTarget(name: "StoreTortureWriter", dependencies: ["CofferStore", "CofferCore", "CofferCrypto"],
                          path: "Tests/Tools/StoreTortureWriter"),
        .executableTarget(name: "FakePinentry", dependencies: ["SystemKit"], path: "Tests/Tools/FakePinentry"),
        // `coffer-torture`: SIGKILLs the real cofferd under writers (scripts/torture, BusTortureTests).
        .executableTarget(name: "coffer-torture", dependencies: ["SecretServiceClient", "SecretServiceProtocol", "CofferCore",
                                                               "CofferCrypto", "DBusKit", "CofferTestSupport"],
                          path: "Tests/Tools/BusTorture"),
        .testTarget(name: "SystemKitTests", dependencies: ["SystemKit", "CofferTestSupport"]),
        .testTarget(name: "CofferCryptoTests", dependencies: ["CofferCrypto", "SystemKit"]),
        .testTarget(name: "CofferCoreTests", dependencies: ["CofferCore", "CofferCrypto", "SystemKit"]),
        .testTarget(name: "CofferBackupTests", dependencies: ["CofferBackup", "CofferCore", "CofferCrypto"]),
        .testTarget(name: "CofferStoreTests", dependencies: ["CofferStore", "CofferCore", "CofferCrypto", "CofferTestSupport", "TPMKit"]),
        .testTarget(name: "CofferCLITests", dependencies: ["CofferTestSupport", "DBusKit", "CofferCrypto", "CofferCore", "CofferStore",
                                                       "GnomeKeyringFormat", "SecretServiceClient", "SecretServiceProtocol"]),
        .testTarget(name: "SecretServiceTests", dependencies: ["SecretService", "SecretServiceProtocol", "SecretServiceClient",
                                                             "CofferCore", "CofferStore", "CofferCrypto", "DBusKit",
                                                             "CofferTestSupport", "SystemKit"]),
        .testTarget(name: "CofferdTests", dependencies: ["DBusKit", "CofferCrypto", "CofferCore", "CofferStore", "CofferTestSupport",
                                                      "SecretServiceProtocol", "SecretServiceClient", "SystemKit"]),
        .testTarget(name: "DBusKitTests", dependencies: ["DBusKit", "CofferTestSupport"]),
        .testTarget(name: "TPMKitTests", dependencies: ["TPMKit", "CofferCrypto", "CofferTestSupport"]),

        // Fuzzing (`scripts/fuzz`): harnesses over the real parsers, run by libFuzzer executables
        // (built with -sanitize=fuzzer -DFUZZING) and, without sanitizers, by FuzzReplayTests,
        // which replays the committed corpus and crash regressions under Fuzz/. The harness
        // reaches the parsers through `package` declarations of DBusKit and CofferStore, not
        // `@testable import`, so that it builds in release mode too (`swift build -c release`).
        .target(name: "FuzzHarness", dependencies: ["DBusKit", "CofferStore", "CofferCore", "CofferCrypto", "CLibFuzzer"],
                path: "Fuzz/Harness"),
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .executableTarget(name: "DBusMessageFuzz", dependencies: ["FuzzHarness"], path: "Fuzz/DBusMessageFuzz"),
        .executableTarget(name: "StoreFileFuzz", dependencies: ["FuzzHarness"], path: "Fuzz/StoreFileFuzz"),
        // The real gnome-keyring-daemon: its files read back, and the client library against it.
        .testTarget(name: "GnomeKeyringTests", dependencies: ["GnomeKeyringFormat", "CofferCore", "CofferCrypto", "CofferTestSupport",
                                                                  "DBusKit", "SecretServiceClient", "SecretServiceProtocol"]),
        .testTarget(name: "FuzzReplayTests", dependencies: ["FuzzHarness", "CofferTestSupport"]),
        // The packaging: the user unit, `make install`, the Debian package scripts/package-deb builds.
        .testTarget(name: "PackagingTests", dependencies: ["CofferCore", "CofferStore", "CofferTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
