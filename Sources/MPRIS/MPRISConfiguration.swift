public import DBus

/// How an app appears on the bus as an MPRIS player.
public struct MPRISConfiguration: Sendable {
    /// The bus name suffix: the player is `org.mpris.MediaPlayer2.<appName>`.
    public var appName: String
    /// `Identity`: the name a desktop shows, such as "Earshot".
    public var identity: String
    /// `DesktopEntry`: the basename of the app's .desktop file, without extension.
    public var desktopEntry: String?
    /// `SupportedUriSchemes`, such as `["file"]`; ``RemoteCommandCenter/openURICommand``
    /// only receives URIs with these schemes.
    public var supportedURISchemes: [String] = []
    /// `SupportedMimeTypes`.
    public var supportedMIMETypes: [String] = []
    /// When set, the player owns `org.mpris.MediaPlayer2.<appName>.instance<id>` alone
    /// instead of sharing the app name with the app's other processes.
    public var instanceID: String?
    /// How long property changes are collected into one `PropertiesChanged`: the first
    /// change after a quiet interval is sent at once, and what follows within this interval
    /// of it goes out together at the interval's end.
    public var coalescingInterval: Duration = .milliseconds(100)

    /// A configuration for `org.mpris.MediaPlayer2.<appName>`, shown as `identity`; the
    /// other fields keep their defaults (no URI schemes or MIME types, a shared name).
    public init(appName: String, identity: String, desktopEntry: String? = nil) {
        self.appName = appName
        self.identity = identity
        self.desktopEntry = desktopEntry
    }

    /// The shared name every process of the app queues for.
    public var sharedBusName: String { "org.mpris.MediaPlayer2.\(appName)" }

    /// The last-sound-wins stack of the app's processes: each queues for it, and takes it
    /// when it sounds; its owner is the app's target. Desktops never see it: the entry they
    /// show, ``sharedBusName``, stays with one process and relays to this name's owner
    /// (``MPRISPresence``).
    public var targetBusName: String { "org.earshot.MPRISTarget.\(appName)" }

    /// The longest ``appName`` whose bus names fit D-Bus's 255 bytes: the longer of them is
    /// ``targetBusName``, `org.earshot.MPRISTarget.<appName>`. An ``instanceID`` takes
    /// `.instance` and its own length more in ``busName``.
    public static let maximumAppNameLength = 255 - MPRISConfiguration(appName: "", identity: "").targetBusName.utf8.count

    /// The name desktops see this player under.
    public var busName: String {
        instanceID.map { "\(sharedBusName).instance\($0)" } ?? sharedBusName
    }

    /// Where this app's track ids live: `/org/earshot/<appName>/Track`. MPRIS reserves
    /// `/org/mpris`, so ids never start there.
    public var trackIDPrefix: ObjectPath {
        ObjectPath("/org/earshot").appending(escaped: appName).appending(escaped: "Track")
    }

    /// Checks the names and the instance id, and that the bus names fit D-Bus's 255 bytes
    /// (``maximumAppNameLength``).
    ///
    /// - Throws: ``DBusError`` `InvalidArgs` naming the bad value.
    public func validate() throws(DBusError) {
        guard !appName.isEmpty, !appName.contains("."),
              appName.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }),
              !("0"..."9").contains(appName.unicodeScalars.first!) else {
            throw .invalidArgs("MPRIS app name “\(appName)” must be one bus-name element: letters, digits, “_” or “-”, not starting with a digit")
        }
        if let instanceID {
            guard !instanceID.isEmpty, instanceID.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }) else {
                throw .invalidArgs("MPRIS instance id “\(instanceID)” may hold only letters, digits and “_”")
            }
        }
        try BusName.validate(busName)
        try BusName.validate(targetBusName)
        for scheme in supportedURISchemes where scheme.isEmpty || scheme.contains(":") {
            throw .invalidArgs("“\(scheme)” is not a URI scheme")
        }
    }
}
