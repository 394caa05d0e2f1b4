import SystemKit

/// A portal backend's `.portal` file: which bus name serves which portal interfaces.
struct PortalBackend {
    /// The file name without `.portal`: how portals.conf names it.
    let name: String
    let dbusName: String
    let interfaces: [String]
    /// The deprecated `UseIn=` desktops.
    let useIn: [String]

    func serves(_ interface: String) -> Bool { interfaces.contains(interface) }
}

/// Finding 3: which backend xdg-desktop-portal would use for the Secret portal
/// (org.freedesktop.impl.portal.Secret), by its rules (portals.conf(5) and its source):
///
/// - Backends are the `.portal` files in $XDG_DESKTOP_PORTAL_DIR, else
///   /usr/share/xdg-desktop-portal/portals, ordered by whether their `UseIn` names one of the
///   current desktops, then by name.
/// - One configuration file counts: the first found, searching $XDG_CONFIG_HOME, each
///   $XDG_CONFIG_DIRS, /etc, $XDG_DATA_HOME, each $XDG_DATA_DIRS, /usr/share (each
///   `/xdg-desktop-portal`; only $XDG_DESKTOP_PORTAL_DIR when that is set), and in each
///   directory `<desktop>-portals.conf` for each desktop of $XDG_CURRENT_DESKTOP (lower case)
///   before `portals.conf`; a file counts when it has a `[preferred]` group.
/// - Its entry for the interface, else its `default`, lists backends in order (`*`: the first
///   that serves it; `none`: no backend); failing that, the first backend whose `UseIn`
///   names a current desktop; failing that, the GTK backend if it serves the interface.
enum PortalCheck {
    static let interface = "org.freedesktop.impl.portal.Secret"

    /// Coffer's own backend file, `coffer.portal`, by the name portals.conf gives it.
    static let cofferBackend = "coffer"
    /// The bus name both Coffer's and gnome-keyring's backend files name: whichever Secret
    /// Service owns it serves the portal.
    static let secretServiceBusName = "org.freedesktop.secrets"

    /// The backend chosen and how (for the finding), or nil and why none.
    struct Choice {
        let backend: PortalBackend?
        let reason: String
        /// Whether Coffer's backend file is installed (it can be chosen).
        var cofferOffered = false
    }

    static func choose(_ session: SessionPaths) -> Choice {
        let desktops = session.desktops.filter(isValidDesktop).map { $0.lowercased() }
        let backends = loadBackends(session, desktops: desktops)
        var choice = choose(among: backends, session, desktops: desktops)
        choice.cofferOffered = backends.contains { $0.name == cofferBackend && $0.serves(interface) }
        return choice
    }

    private static func choose(among backends: [PortalBackend], _ session: SessionPaths, desktops: [String]) -> Choice {
        if let (path, preferred) = configuration(session, desktops: desktops) {
            let entry = preferred[interface]
            let fallback = preferred["default"]
            if (entry ?? fallback ?? []).contains("none") {
                return Choice(backend: nil, reason: "\(path) sets it to none")
            }
            for list in [entry, fallback].compactMap({ $0 }) {
                for name in list {
                    if name == "*" {
                        if let backend = backends.first(where: { $0.serves(interface) }) {
                            return Choice(backend: backend, reason: "the first that serves it, as \(path) says (*)")
                        }
                        break
                    }
                    if let backend = backends.first(where: { $0.name == name && $0.serves(interface) }) {
                        return Choice(backend: backend, reason: "chosen in \(path)")
                    }
                }
            }
        }
        for desktop in desktops {
            if let backend = backends.first(where: { $0.serves(interface) && $0.useIn.contains { $0.lowercased() == desktop } }) {
                return Choice(backend: backend, reason: "by its deprecated UseIn=\(backend.useIn.joined(separator: ";")), no portals.conf choosing one")
            }
        }
        if let gtk = backends.first(where: { $0.dbusName == "org.freedesktop.impl.portal.desktop.gtk" && $0.serves(interface) }) {
            return Choice(backend: gtk, reason: "as the last-resort fallback")
        }
        let offered = backends.filter { $0.serves(interface) }.map { $0.name + ".portal" }
        return Choice(backend: nil, reason: offered.isEmpty
                      ? "no installed portal backend offers it"
                      : "none is chosen for this desktop (\(offered.joined(separator: ", ")) offer\(offered.count == 1 ? "s" : "") it)")
    }

    static func finding(_ choice: Choice, bus: BusState) -> Finding {
        guard let backend = choice.backend else {
            let hint = choice.cofferOffered
                ? "; for Coffer to serve it, add \(interface)=\(cofferBackend) under [preferred] in ~/.config/xdg-desktop-portal/portals.conf"
                : ""
            return Finding("portal", .ok, "no backend would serve the Secret portal (\(interface)): \(choice.reason)\(hint)")
        }
        let file = backend.name == cofferBackend ? "coffer.portal (Coffer's own)" : "\(backend.name).portal"
        let served = "the Secret portal (\(interface)) would be served by \(file) (\(backend.dbusName)), \(choice.reason)"
        guard backend.dbusName == secretServiceBusName else { return Finding("portal", .ok, served) }
        switch bus {
        case .owned(let owner) where owner.isCofferd:
            return Finding("portal", .ok, "\(served); that name is cofferd's (PID \(owner.process.map { String($0.pid) } ?? "?")), so sandboxed (Flatpak) applications get their secrets from Coffer")
        case .owned(let owner):
            return Finding("portal", .ok, "\(served); that name is \(owner.description)'s now, so it answers the portal, not Coffer")
        default:
            return Finding("portal", .ok, "\(served); whichever Secret Service owns that name answers the portal (cofferd does)")
        }
    }

    // MARK: Files

    private static func loadBackends(_ session: SessionPaths, desktops: [String]) -> [PortalBackend] {
        let directory = session.portalOverride ?? "/usr/share/xdg-desktop-portal/portals"
        let backends = SessionPaths.names(in: directory).filter { $0.hasSuffix(".portal") }.compactMap { file -> PortalBackend? in
            guard let keys = KeyFile(path: directory + "/" + file),
                  let dbusName = keys.value("DBusName", in: "portal"),
                  let interfaces = keys.list("Interfaces", in: "portal"),
                  interfaces.allSatisfy({ $0.hasPrefix("org.freedesktop.impl.portal.") }) else { return nil }
            return PortalBackend(name: String(file.dropLast(".portal".count)), dbusName: dbusName, interfaces: interfaces,
                                 useIn: keys.list("UseIn", in: "portal") ?? [])
        }
        // Those whose UseIn names the most specific current desktop first, then by name.
        func rank(_ backend: PortalBackend) -> Int {
            desktops.firstIndex { desktop in backend.useIn.contains { $0.lowercased() == desktop } } ?? desktops.count
        }
        return backends.sorted { (rank($0), $0.name) < (rank($1), $1.name) }
    }

    /// The configuration file that counts, and its `[preferred]` entries.
    private static func configuration(_ session: SessionPaths, desktops: [String]) -> (String, [String: [String]])? {
        let subdirectory = "/xdg-desktop-portal"
        let directories: [String]
        if let override = session.portalOverride {
            directories = [override]
        } else {
            directories = ([session.configHome] + session.configDirs + ["/etc", session.dataHome] + session.dataDirs + ["/usr/share"])
                .map { $0 + subdirectory }
        }
        for directory in directories {
            for file in desktops.map({ "\($0)-portals.conf" }) + ["portals.conf"] {
                let path = directory + "/" + file
                guard let keys = KeyFile(path: path), keys.hasGroup("preferred") else { continue }
                var preferred: [String: [String]] = [:]
                for key in keys.keys(in: "preferred") { preferred[key] = keys.list(key, in: "preferred") ?? [] }
                return (path, preferred)
            }
        }
        return nil
    }

    /// A desktop name xdg-desktop-portal accepts: letters, digits, `-` and `_`.
    private static func isValidDesktop(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
    }
}
