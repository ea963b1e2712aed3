@testable import Earshot
import MPRIS
import Testing

/// The MPRIS names of the player the shared session publishes without a call, made from the
/// process's name (``AudioSession/implicitConfiguration(appName:)``, a pure function).
@Suite("the implicit MPRIS publication's names (no bus)")
struct ImplicitRemoteControlNameTests {
    @Test("a 300-character process name still makes valid bus names within D-Bus's 255 bytes; the identity keeps it whole",
          arguments: [String(repeating: "long-process ", count: 23), String(repeating: "7é", count: 150)])
    func longProcessName(_ name: String) throws {
        let configuration = AudioSession.implicitConfiguration(appName: name)
        try configuration.validate()
        #expect(configuration.sharedBusName.utf8.count <= 255)
        #expect(configuration.targetBusName.utf8.count <= 255)
        #expect(configuration.appName.utf8.count == MPRISConfiguration.maximumAppNameLength)
        #expect(configuration.identity == name)
    }

    @Test("letters, digits and “_” are kept, the rest becomes “_”, a leading digit gets one before it")
    func mapping() throws {
        #expect(AudioSession.implicitConfiguration(appName: "earshot-ios-ports").appName == "earshot_ios_ports")
        #expect(AudioSession.implicitConfiguration(appName: "9lives").appName == "_9lives")
        #expect(AudioSession.implicitConfiguration(appName: "").appName == "_")
        try AudioSession.implicitConfiguration(appName: "").validate()
    }
}
