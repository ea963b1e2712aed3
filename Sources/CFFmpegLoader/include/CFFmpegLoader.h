#ifndef EARSHOT_CFFMPEGLOADER_H
#define EARSHOT_CFFMPEGLOADER_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswresample/swresample.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libavutil/sha.h>

// FFmpeg's libraries are loaded when first needed (`earshot_ffmpeg_load`), not linked: they
// bring about 130 more shared libraries (codecs, network, TLS) whose loading and
// relocation cost every process tens of milliseconds at start (`earshot --help`, the
// arbiter daemon, `earshot sound`), whether it decodes anything with FFmpeg or not.
// Swift calls FFmpeg through this table only.
struct earshot_ffmpeg {
    __typeof__(av_channel_layout_default) * _Nonnull av_channel_layout_default;
    __typeof__(av_channel_layout_uninit) * _Nonnull av_channel_layout_uninit;
    __typeof__(av_dict_free) * _Nonnull av_dict_free;
    __typeof__(av_dict_get) * _Nonnull av_dict_get;
    __typeof__(av_dict_set) * _Nonnull av_dict_set;
    __typeof__(av_find_best_stream) * _Nonnull av_find_best_stream;
    __typeof__(av_frame_alloc) * _Nonnull av_frame_alloc;
    __typeof__(av_frame_free) * _Nonnull av_frame_free;
    __typeof__(av_frame_unref) * _Nonnull av_frame_unref;
    __typeof__(av_free) * _Nonnull av_free;
    __typeof__(av_freep) * _Nonnull av_freep;
    __typeof__(av_log_set_callback) * _Nonnull av_log_set_callback;
    __typeof__(av_malloc) * _Nonnull av_malloc;
    __typeof__(av_opt_get) * _Nonnull av_opt_get;
    __typeof__(av_packet_alloc) * _Nonnull av_packet_alloc;
    __typeof__(av_packet_free) * _Nonnull av_packet_free;
    __typeof__(av_packet_unref) * _Nonnull av_packet_unref;
    __typeof__(av_probe_input_buffer2) * _Nonnull av_probe_input_buffer2;
    __typeof__(av_read_frame) * _Nonnull av_read_frame;
    __typeof__(av_rescale) * _Nonnull av_rescale;
    __typeof__(av_rescale_q) * _Nonnull av_rescale_q;
    __typeof__(av_sha_alloc) * _Nonnull av_sha_alloc;
    __typeof__(av_sha_final) * _Nonnull av_sha_final;
    __typeof__(av_sha_init) * _Nonnull av_sha_init;
    __typeof__(av_sha_update) * _Nonnull av_sha_update;
    __typeof__(av_strerror) * _Nonnull av_strerror;
    __typeof__(avcodec_alloc_context3) * _Nonnull avcodec_alloc_context3;
    __typeof__(avcodec_descriptor_get) * _Nonnull avcodec_descriptor_get;
    __typeof__(avcodec_flush_buffers) * _Nonnull avcodec_flush_buffers;
    __typeof__(avcodec_free_context) * _Nonnull avcodec_free_context;
    __typeof__(avcodec_get_name) * _Nonnull avcodec_get_name;
    __typeof__(avcodec_open2) * _Nonnull avcodec_open2;
    __typeof__(avcodec_parameters_to_context) * _Nonnull avcodec_parameters_to_context;
    __typeof__(avcodec_profile_name) * _Nonnull avcodec_profile_name;
    __typeof__(avcodec_receive_frame) * _Nonnull avcodec_receive_frame;
    __typeof__(avcodec_send_packet) * _Nonnull avcodec_send_packet;
    __typeof__(avformat_alloc_context) * _Nonnull avformat_alloc_context;
    __typeof__(avformat_close_input) * _Nonnull avformat_close_input;
    __typeof__(avformat_find_stream_info) * _Nonnull avformat_find_stream_info;
    __typeof__(avformat_open_input) * _Nonnull avformat_open_input;
    __typeof__(avformat_seek_file) * _Nonnull avformat_seek_file;
    __typeof__(avio_alloc_context) * _Nonnull avio_alloc_context;
    __typeof__(avio_closep) * _Nonnull avio_closep;
    __typeof__(avio_context_free) * _Nonnull avio_context_free;
    __typeof__(avio_open) * _Nonnull avio_open;
    __typeof__(swr_alloc_set_opts2) * _Nonnull swr_alloc_set_opts2;
    __typeof__(swr_convert) * _Nonnull swr_convert;
    __typeof__(swr_free) * _Nonnull swr_free;
    __typeof__(swr_get_out_samples) * _Nonnull swr_get_out_samples;
    __typeof__(swr_init) * _Nonnull swr_init;
    // Encoding (the recorder's AAC and ALAC in .m4a). Every one is in FFmpeg 5.1 (libavcodec 59,
    // libavformat 59, libavutil 57), the oldest these headers are written for, and still in 7.1.
    __typeof__(av_frame_get_buffer) * _Nonnull av_frame_get_buffer;
    __typeof__(av_frame_make_writable) * _Nonnull av_frame_make_writable;
    __typeof__(av_interleaved_write_frame) * _Nonnull av_interleaved_write_frame;
    __typeof__(av_packet_rescale_ts) * _Nonnull av_packet_rescale_ts;
    __typeof__(av_write_trailer) * _Nonnull av_write_trailer;
    __typeof__(avcodec_find_encoder_by_name) * _Nonnull avcodec_find_encoder_by_name;
    __typeof__(avcodec_parameters_from_context) * _Nonnull avcodec_parameters_from_context;
    __typeof__(avcodec_receive_packet) * _Nonnull avcodec_receive_packet;
    __typeof__(avcodec_send_frame) * _Nonnull avcodec_send_frame;
    __typeof__(avcodec_version) * _Nonnull avcodec_version;
    __typeof__(avformat_alloc_output_context2) * _Nonnull avformat_alloc_output_context2;
    __typeof__(avformat_free_context) * _Nonnull avformat_free_context;
    __typeof__(avformat_new_stream) * _Nonnull avformat_new_stream;
    __typeof__(avformat_write_header) * _Nonnull avformat_write_header;
};

/// Loads libavformat, libavcodec, libswresample and libavutil (the major versions these
/// headers are for) and resolves the table, once; later calls return the same answer.
/// Returns NULL when a library or function is missing, with `*error` (if given) saying
/// which, in a string that lives as long as the process.
const struct earshot_ffmpeg *_Nullable earshot_ffmpeg_load(const char *_Nullable *_Nullable error);
#endif
