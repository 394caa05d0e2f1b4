/// Builds introspection XML for a node.
enum Introspection {
    static let header = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    static func xml(interfaces: [InterfaceDescription], children: [String], comment: String? = nil) -> String {
        var out = header
        if let comment {
            precondition(!comment.contains("--"), "an XML comment cannot hold '--'")
            out += "<!-- " + comment + " -->\n"
        }
        out += "<node>\n"
        for iface in interfaces { append(iface, to: &out) }
        for child in children { out += " <node name=\"\(escape(child))\"/>\n" }
        out += "</node>\n"
        return out
    }

    private static func append(_ iface: InterfaceDescription, to out: inout String) {
        out += " <interface name=\"\(escape(iface.name))\">\n"
        for m in iface.methods {
            if m.inArguments.isEmpty && m.outArguments.isEmpty {
                out += "  <method name=\"\(escape(m.name))\"/>\n"
                continue
            }
            out += "  <method name=\"\(escape(m.name))\">\n"
            for a in m.inArguments { out += "   <arg name=\"\(escape(a.name))\" type=\"\(escape(a.type.rawValue))\" direction=\"in\"/>\n" }
            for a in m.outArguments { out += "   <arg name=\"\(escape(a.name))\" type=\"\(escape(a.type.rawValue))\" direction=\"out\"/>\n" }
            out += "  </method>\n"
        }
        for s in iface.signals {
            out += "  <signal name=\"\(escape(s.name))\">\n"
            for a in s.arguments { out += "   <arg name=\"\(escape(a.name))\" type=\"\(escape(a.type.rawValue))\"/>\n" }
            out += "  </signal>\n"
        }
        for p in iface.properties {
            out += "  <property name=\"\(escape(p.name))\" type=\"\(escape(p.type.rawValue))\" access=\"\(p.access.introspectionValue)\"/>\n"
        }
        out += " </interface>\n"
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(c)
            }
        }
        return out
    }
}

extension InterfaceDescription {
    /// A standalone introspection document of `interfaces`, with `comment` above the node: the
    /// text of an interface file such as those in `/usr/share/dbus-1/interfaces`.
    public static func introspectionDocument(_ interfaces: [InterfaceDescription], comment: String? = nil) -> String {
        Introspection.xml(interfaces: interfaces, children: [], comment: comment)
    }
}
