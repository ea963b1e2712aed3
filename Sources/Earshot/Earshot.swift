// Earshot: the iOS audio model on the Linux desktop.
//
// This umbrella module is the public surface apps import: the audio session, players and
// system sounds, the now-playing store and remote commands with their MPRIS export, and
// the session and route types they use.

@_exported import AudioEngine
@_exported import AudioRoutes
@_exported import DBus
@_exported import MPRIS
@_exported import SessionPolicy
