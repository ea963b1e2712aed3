/// Introspection XML generated from the same declarations that drive dispatch.
enum Introspection {
    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        """

    static func xml(interfaces: [DBusInterface], children: [String]) -> String {
        var out = doctype + "\n<node>\n"
        if !interfaces.isEmpty {
            out += standard
        }
        for interface in interfaces {
            out += "  <interface name=\"\(escape(interface.name))\">\n"
            for method in interface.methods {
                out += "    <method name=\"\(escape(method.name))\">\n"
                for arg in method.inputs { out += argument(arg, direction: "in") }
                for arg in method.outputs { out += argument(arg, direction: "out") }
                out += "    </method>\n"
            }
            for signal in interface.signals {
                out += "    <signal name=\"\(escape(signal.name))\">\n"
                for arg in signal.arguments { out += argument(arg, direction: nil) }
                out += "    </signal>\n"
            }
            for property in interface.properties {
                let open = "    <property name=\"\(escape(property.name))\" type=\"\(property.type.signature)\" access=\"\(property.access.rawValue)\""
                if property.changeSignal == .true {
                    out += open + "/>\n"
                } else {
                    out += open + ">\n"
                    out += "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"\(property.changeSignal.rawValue)\"/>\n"
                    out += "    </property>\n"
                }
            }
            out += "  </interface>\n"
        }
        for child in children { out += "  <node name=\"\(escape(child))\"/>\n" }
        return out + "</node>\n"
    }

    private static func argument(_ arg: DBusArgument, direction: String?) -> String {
        let name = arg.name.isEmpty ? "" : " name=\"\(escape(arg.name))\""
        let dir = direction.map { " direction=\"\($0)\"" } ?? ""
        return "      <arg\(name) type=\"\(arg.type.signature)\"\(dir)/>\n"
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }

    /// The interfaces every exported object has.
    private static let standard = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface_name" type="s"/>
              <arg name="changed_properties" type="a{sv}"/>
              <arg name="invalidated_properties" type="as"/>
            </signal>
          </interface>

        """
}
