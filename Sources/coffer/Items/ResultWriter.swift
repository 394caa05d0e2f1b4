import CofferCore
import CofferCrypto

/// Formats one search result into a buffer reserved large enough never to reallocate (so that
/// no copy of a secret is left behind in freed memory); the caller zeroes it.
enum ResultWriter {
    static func capacity(for result: ItemMatch, secretBytes: Int) -> Int {
        var total = 256 + secretBytes * 6
        if let metadata = result.metadata {
            total += metadata.label.utf8.count * 6 + 32
            for (name, value) in metadata.attributes { total += (name.utf8.count + value.utf8.count) * 6 + 32 }
        }
        return total
    }

    /// One result as a JSON object (times in seconds since 1970), or in secret-tool's layout.
    static func write(_ result: ItemMatch, secret: Secret?, json: Bool, to out: inout [UInt8]) {
        if json {
            self.json(result, secret: secret, to: &out)
        } else {
            text(result, secret: secret, to: &out)
        }
    }

    private static func json(_ result: ItemMatch, secret: Secret?, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        key("collection", &out)
        Encode.jsonString(result.reference.collection.rawValue, to: &out)
        out.append(contentsOf: Array(", ".utf8))
        key("id", &out)
        out.append(contentsOf: Array(String(result.reference.item).utf8))
        out.append(contentsOf: Array(", ".utf8))
        key("label", &out)
        if let metadata = result.metadata {
            Encode.jsonString(metadata.label, to: &out)
        } else {
            out.append(contentsOf: Array("null".utf8))
        }
        out.append(contentsOf: Array(", ".utf8))
        key("attributes", &out)
        if let metadata = result.metadata {
            out.append(UInt8(ascii: "{"))
            for (position, name) in metadata.attributes.keys.sorted().enumerated() {
                if position > 0 { out.append(contentsOf: Array(", ".utf8)) }
                Encode.jsonString(name, to: &out)
                out.append(contentsOf: Array(": ".utf8))
                Encode.jsonString(metadata.attributes[name]!, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        } else {
            out.append(contentsOf: Array("null".utf8))
        }
        for (name, time) in [("created", result.metadata?.created), ("modified", result.metadata?.modified)] {
            out.append(contentsOf: Array(", ".utf8))
            key(name, &out)
            out.append(contentsOf: Array((time.map { String($0) } ?? "null").utf8))
        }
        out.append(contentsOf: Array(", ".utf8))
        key("locked", &out)
        out.append(contentsOf: Array((result.isLocked ? "true" : "false").utf8))
        if let secret {
            secret.bytes.withUnprotectedCopy { bytes in
                out.append(contentsOf: Array(", ".utf8))
                if isValidUTF8(bytes) {
                    key("secret", &out)
                    Encode.jsonString(bytes, to: &out)
                } else {
                    key("secret_base64", &out)
                    out.append(UInt8(ascii: "\""))
                    Encode.base64(bytes, to: &out)
                    out.append(UInt8(ascii: "\""))
                }
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// secret-tool's layout: a "[collection/id]" header, then "key = value" lines (times in
    /// local time, as secret-tool prints them), with control characters escaped.
    private static func text(_ result: ItemMatch, secret: Secret?, to out: inout [UInt8]) {
        line("[\(result.reference)]", &out)
        if let metadata = result.metadata {
            line("label = \(Encode.display(metadata.label))", &out)
            line("created = \(LocalTime.format(secondsSince1970: metadata.created))", &out)
            line("modified = \(LocalTime.format(secondsSince1970: metadata.modified))", &out)
        }
        line("locked = \(result.isLocked ? "yes" : "no")", &out)
        if let metadata = result.metadata {
            for name in metadata.attributes.keys.sorted() {
                line("attribute.\(Encode.display(name)) = \(Encode.display(metadata.attributes[name]!))", &out)
            }
        }
        if let secret {
            secret.bytes.withUnprotectedCopy { bytes in
                if isValidUTF8(bytes) {
                    out.append(contentsOf: Array("secret = ".utf8))
                    Encode.display(bytes, to: &out)
                } else {
                    out.append(contentsOf: Array("secret_base64 = ".utf8))
                    Encode.base64(bytes, to: &out)
                }
                out.append(UInt8(ascii: "\n"))
            }
        }
    }

    private static func key(_ name: String, _ out: inout [UInt8]) {
        Encode.jsonString(name, to: &out)
        out.append(contentsOf: Array(": ".utf8))
    }

    private static func line(_ text: String, _ out: inout [UInt8]) {
        out.append(contentsOf: Array(text.utf8))
        out.append(UInt8(ascii: "\n"))
    }
}
