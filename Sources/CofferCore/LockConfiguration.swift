import SystemKit

/// The settings file's text (`coffer.conf`): when each collection locks by itself.
///
/// ```
/// [every collection]
/// lock-after-idle = 15m
/// lock-on-screen-lock = yes
///
/// [collection work]
/// lock-after-idle = never
/// ```
///
/// A collection's own section beats `[every collection]`, which beats `LockSettings.standard`.
/// Blank lines and lines starting with `#` are kept as they are: a change rewrites one line.
/// A line that cannot be read is ignored (and reported in `problems`), never guessed at.
public struct LockConfiguration: Sendable, Equatable {
    /// The lines as read (or as changed).
    public private(set) var lines: [String]
    /// What was wrong with which line (1-based), for a warning; those lines count for nothing.
    public private(set) var problems: [String] = []
    private var everyCollection: [LockSettings.Key: String] = [:]
    private var collections: [CollectionID: [LockSettings.Key: String]] = [:]

    static let everySection = "every collection"
    static let collectionPrefix = "collection "

    public init(text: String = "") {
        lines = text.isEmpty ? [] : KeyFile.splitLines(text).map(String.init)
        if lines.last == "" { lines.removeLast() }
        parse()
    }

    /// The file's text.
    public var text: String { lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n" }

    /// What applies to `id`.
    public func settings(for id: CollectionID) -> LockSettings {
        var settings = everyCollectionSettings
        for (key, value) in collections[id] ?? [:] { _ = settings.set(key, from: value) }
        return settings
    }

    /// What applies to a collection without a section of its own.
    public var everyCollectionSettings: LockSettings {
        var settings = LockSettings.standard
        for (key, value) in everyCollection { _ = settings.set(key, from: value) }
        return settings
    }

    /// Sets `key` to `value` for `id` (nil: every collection). Throws, changing nothing, when
    /// `value` is not one `key` accepts.
    public mutating func set(_ key: LockSettings.Key, to value: String, for id: CollectionID?) throws(CofferError) {
        var probe = LockSettings.standard
        guard probe.set(key, from: value) else {
            throw .invalidArgument("\(key.rawValue) takes \(key.accepts), not '\(value)'")
        }
        let section = id.map { Self.collectionPrefix + $0.rawValue } ?? Self.everySection
        let line = "\(key.rawValue) = \(value)"
        var current: String?
        var lastInSection: Int?
        var existing: [Int] = []
        for (index, raw) in lines.enumerated() {
            let parsed = KeyFile.Line(Substring(raw))
            if case .group(let name) = parsed {
                current = name
                if name == section { lastInSection = index }
                continue
            }
            guard current == section else { continue }
            if KeyFile.Line.trimmed(Substring(raw)) != "" { lastInSection = index }
            if case .entry(key.rawValue, _) = parsed { existing.append(index) }
        }
        if let last = existing.last {
            // The last of repeated lines is the one that counts: it changes, the others go.
            lines[last] = line
            for index in existing.dropLast().reversed() { lines.remove(at: index) }
        } else if let lastInSection {
            lines.insert(line, at: lastInSection + 1)
        } else {
            if let last = lines.last, KeyFile.Line.trimmed(Substring(last)) != "" { lines.append("") }
            lines += ["[\(section)]", line]
        }
        parse()
    }

    private mutating func parse() {
        problems = []
        everyCollection = [:]
        collections = [:]
        enum Section { case none, every, collection(CollectionID), unknown }
        var section = Section.none
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let name: String, value: String
            switch KeyFile.Line(Substring(raw)) {
            case .blank:
                continue
            case .group(let group):
                if group == Self.everySection {
                    section = .every
                } else if group.hasPrefix(Self.collectionPrefix), let id = CollectionID(KeyFile.Line.trimmed(group.dropFirst(Self.collectionPrefix.count))) {
                    section = .collection(id)
                } else {
                    problems.append("line \(number): unknown section [\(group)] (there are [\(Self.everySection)] and [\(Self.collectionPrefix)ID], an ID being \(CollectionID.rule)); its settings are ignored")
                    section = .unknown
                }
                continue
            case .entry(let key, let text) where !KeyFile.Line.trimmed(Substring(text)).isEmpty:
                (name, value) = (key, KeyFile.Line.trimmed(Substring(text)))
            case .entry, .malformed:
                problems.append("line \(number): not 'name = value', a [section] or a # comment; ignored")
                continue
            }
            guard let key = LockSettings.Key(rawValue: name) else {
                let known = LockSettings.Key.allCases.map(\.rawValue).joined(separator: ", ")
                problems.append("line \(number): unknown setting '\(name)' (known: \(known)); ignored")
                continue
            }
            var probe = LockSettings.standard
            guard probe.set(key, from: value) else {
                problems.append("line \(number): \(name) takes \(key.accepts), not '\(value)'; ignored")
                continue
            }
            switch section {
            case .none: problems.append("line \(number): '\(name)' comes before any [section]; ignored")
            case .every: everyCollection[key] = value
            case .collection(let id): collections[id, default: [:]][key] = value
            case .unknown: break   // the section was reported
            }
        }
    }
}
