#ifndef EARSHOT_CLIBRARYLOADER_H
#define EARSHOT_CLIBRARYLOADER_H
#include <stddef.h>
#include <alsa/asoundlib.h>
#include <rubberband/rubberband-c.h>
#include <speex/speex_resampler.h>

// libasound, librubberband and libspeexdsp are loaded when first needed, not linked, as
// FFmpeg is (CFFmpegLoader.h): most processes never use them (`earshot sound NAME` plays
// from the sound server's sample cache, `earshot --help` plays nothing; ALSA is only the
// fallback when no sound server answers), and linking them costs every process their
// loading and relocation at start (the installed binary: 3 of its 35 libraries, about 25
// of its page faults).
// libsndfile stays linked: libpulse's libpulsecommon links it, so loading it later would
// save nothing where libpulse is. Swift calls these libraries through the tables only.

#define EARSHOT_ALSA_FUNCTIONS(F) \
    F(snd_card_next) F(snd_ctl_card_info) F(snd_ctl_card_info_free) F(snd_ctl_card_info_get_driver) \
    F(snd_ctl_card_info_get_id) F(snd_ctl_card_info_get_name) F(snd_ctl_card_info_malloc) F(snd_ctl_close) \
    F(snd_ctl_elem_id_free) F(snd_ctl_elem_id_malloc) F(snd_ctl_elem_list) F(snd_ctl_elem_list_alloc_space) \
    F(snd_ctl_elem_list_free) F(snd_ctl_elem_list_free_space) F(snd_ctl_elem_list_get_count) \
    F(snd_ctl_elem_list_get_id) F(snd_ctl_elem_list_get_index) F(snd_ctl_elem_list_get_interface) \
    F(snd_ctl_elem_list_get_name) F(snd_ctl_elem_list_get_used) F(snd_ctl_elem_list_malloc) F(snd_ctl_elem_read) \
    F(snd_ctl_elem_value_free) F(snd_ctl_elem_value_get_boolean) F(snd_ctl_elem_value_malloc) \
    F(snd_ctl_elem_value_set_id) F(snd_ctl_event_free) F(snd_ctl_event_malloc) F(snd_ctl_open) \
    F(snd_ctl_poll_descriptors) F(snd_ctl_poll_descriptors_count) F(snd_ctl_read) F(snd_ctl_subscribe_events) \
    F(snd_device_name_free_hint) F(snd_device_name_get_hint) F(snd_device_name_hint) F(snd_pcm_close) \
    F(snd_pcm_delay) F(snd_pcm_drain) F(snd_pcm_drop) F(snd_pcm_hw_params) F(snd_pcm_hw_params_any) \
    F(snd_pcm_hw_params_free) F(snd_pcm_hw_params_get_channels_max) F(snd_pcm_hw_params_get_channels_min) \
    F(snd_pcm_hw_params_malloc) F(snd_pcm_hw_params_set_access) F(snd_pcm_hw_params_set_buffer_size_near) \
    F(snd_pcm_hw_params_set_channels) F(snd_pcm_hw_params_set_format) F(snd_pcm_hw_params_set_period_size_near) \
    F(snd_pcm_hw_params_set_rate) F(snd_pcm_hw_params_set_rate_near) F(snd_pcm_open) F(snd_pcm_prepare) \
    F(snd_pcm_readi) F(snd_pcm_recover) F(snd_pcm_start) F(snd_pcm_sw_params) F(snd_pcm_sw_params_current) \
    F(snd_pcm_sw_params_free) F(snd_pcm_sw_params_malloc) F(snd_pcm_sw_params_set_avail_min) \
    F(snd_pcm_sw_params_set_start_threshold) F(snd_pcm_writei) F(snd_strerror)

#define EARSHOT_RUBBERBAND_FUNCTIONS(F) \
    F(rubberband_available) F(rubberband_delete) F(rubberband_get_preferred_start_pad) \
    F(rubberband_get_start_delay) F(rubberband_new) F(rubberband_process) F(rubberband_retrieve) \
    F(rubberband_set_max_process_size)

#define EARSHOT_SPEEXDSP_FUNCTIONS(F) \
    F(speex_resampler_destroy) F(speex_resampler_get_input_latency) F(speex_resampler_init) \
    F(speex_resampler_process_interleaved_float) F(speex_resampler_reset_mem) F(speex_resampler_skip_zeros) \
    F(speex_resampler_strerror)

#define EARSHOT_LIBRARY_FIELD(name) __typeof__(name) *_Nonnull name;
/// libasound's functions that Earshot calls.
struct earshot_alsa { EARSHOT_ALSA_FUNCTIONS(EARSHOT_LIBRARY_FIELD) };
/// librubberband's functions that Earshot calls.
struct earshot_rubberband { EARSHOT_RUBBERBAND_FUNCTIONS(EARSHOT_LIBRARY_FIELD) };
/// libspeexdsp's functions that Earshot calls.
struct earshot_speexdsp { EARSHOT_SPEEXDSP_FUNCTIONS(EARSHOT_LIBRARY_FIELD) };
#undef EARSHOT_LIBRARY_FIELD

/// Loads libasound.so.2 (librubberband.so.2, libspeexdsp.so.1: the sonames the build's
/// headers are for) and resolves its table, once; later calls return the same answer.
/// Returns NULL when the library or one of the functions is missing, with `*error` (if
/// given) saying which and why ("libasound.so.2 cannot be loaded: …"), in a string that
/// lives as long as the process.
const struct earshot_alsa *_Nullable earshot_alsa_load(const char *_Nullable *_Nullable error);
const struct earshot_rubberband *_Nullable earshot_rubberband_load(const char *_Nullable *_Nullable error);
const struct earshot_speexdsp *_Nullable earshot_speexdsp_load(const char *_Nullable *_Nullable error);

/// The soname each `earshot_*_load` opens.
extern const char *_Nonnull const earshot_alsa_soname;
extern const char *_Nonnull const earshot_rubberband_soname;
extern const char *_Nonnull const earshot_speexdsp_soname;

/// What `earshot_*_load` does, uncached and from any `soname`: fills `*table` and returns 1,
/// or returns 0 with the reason in `error` (`size` bytes). The loaders above are this with
/// their library's soname; tests call it with a soname that is missing or the wrong library.
/// A library it opened stays loaded.
int earshot_alsa_load_from(const char *_Nonnull soname, struct earshot_alsa *_Nonnull table, char *_Nonnull error, size_t size);
int earshot_rubberband_load_from(const char *_Nonnull soname, struct earshot_rubberband *_Nonnull table, char *_Nonnull error, size_t size);
int earshot_speexdsp_load_from(const char *_Nonnull soname, struct earshot_speexdsp *_Nonnull table, char *_Nonnull error, size_t size);
#endif
