import Testing

@testable import AudioRoutes

/// Which ALSA hint names stand for inputs when no sound server answers: a card's
/// `sysdefault`, `default` and names of the configuration's own; not the converters and
/// bridges, nor a card's per-use fan-out. (The listing itself, through a configuration of
/// its own, is checked in AudioRecorderSessionTests.)
@Suite struct ALSAInputsTests {
    @Test("kept: default, a card's sysdefault, the configuration's own names")
    func kept() {
        for name in ["default", "sysdefault:CARD=PCH", "headset_mic", "usb_mic", "hdmi_capture_box"] {
            #expect(!ALSAInputs.skipped(name), "\(name)")
        }
    }

    @Test("left out: converters and bridges, and a card's fan-out (hw, plughw, dsnoop, front, surround…, iec958, hdmi, dmix)")
    func leftOut() {
        for name in ["null", "pulse", "pipewire", "jack", "oss", "samplerate", "speexrate", "lavrate", "speex", "upmix", "vdownmix",
                     "hw:CARD=PCH,DEV=0", "plughw:CARD=PCH,DEV=0", "dsnoop:CARD=PCH,DEV=0", "front:CARD=PCH,DEV=0",
                     "surround51:CARD=PCH,DEV=0", "iec958:CARD=PCH,DEV=0", "hdmi:CARD=HDMI,DEV=0", "dmix:CARD=PCH,DEV=0",
                     "usbstream:CARD=Device"] {
            #expect(ALSAInputs.skipped(name), "\(name)")
        }
    }
}
