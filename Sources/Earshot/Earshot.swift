// Earshot: the iOS audio model on the Linux desktop.
//
// This umbrella module is the public surface apps import. Today it carries the
// now-playing store, the remote commands and their MPRIS export; the audio session,
// players and system sounds join it as they land.

@_exported import DBus
@_exported import MPRIS
@_exported import AudioEngine
