// Loads FFmpeg's libraries at the first use and fills the table Swift calls them through
// (see CFFmpegLoader.h for why they are not linked).
#include "CFFmpegLoader.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <libavutil/macros.h>
#include <libavformat/version_major.h>
#include <libavcodec/version_major.h>
#include <libswresample/version_major.h>
#include <libavutil/version.h>

static struct earshot_ffmpeg table;
static char failure[512];
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *open_library(const char *name) {
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle && !failure[0]) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "cannot load %s: %s", name, reason ? reason : "unknown reason");
    }
    return handle;
}

static void load(void) {
    void *avutil = open_library("libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR));
    void *swresample = open_library("libswresample.so." AV_STRINGIFY(LIBSWRESAMPLE_VERSION_MAJOR));
    void *avcodec = open_library("libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR));
    void *avformat = open_library("libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR));
    if (!avutil || !swresample || !avcodec || !avformat) return;
#define RESOLVE(library, name) \
    if (!(table.name = (__typeof__(table.name))dlsym(library, #name))) { \
        snprintf(failure, sizeof failure, "lib%s has no function %s", #library, #name); \
        return; \
    }
    RESOLVE(avutil, av_channel_layout_default)
    RESOLVE(avutil, av_channel_layout_uninit)
    RESOLVE(avutil, av_dict_free)
    RESOLVE(avutil, av_dict_get)
    RESOLVE(avutil, av_dict_set)
    RESOLVE(avformat, av_find_best_stream)
    RESOLVE(avutil, av_frame_alloc)
    RESOLVE(avutil, av_frame_free)
    RESOLVE(avutil, av_frame_unref)
    RESOLVE(avutil, av_free)
    RESOLVE(avutil, av_freep)
    RESOLVE(avutil, av_log_set_callback)
    RESOLVE(avutil, av_malloc)
    RESOLVE(avutil, av_opt_get)
    RESOLVE(avcodec, av_packet_alloc)
    RESOLVE(avcodec, av_packet_free)
    RESOLVE(avcodec, av_packet_unref)
    RESOLVE(avformat, av_probe_input_buffer2)
    RESOLVE(avformat, av_read_frame)
    RESOLVE(avutil, av_rescale)
    RESOLVE(avutil, av_rescale_q)
    RESOLVE(avutil, av_sha_alloc)
    RESOLVE(avutil, av_sha_final)
    RESOLVE(avutil, av_sha_init)
    RESOLVE(avutil, av_sha_update)
    RESOLVE(avutil, av_strerror)
    RESOLVE(avcodec, avcodec_alloc_context3)
    RESOLVE(avcodec, avcodec_descriptor_get)
    RESOLVE(avcodec, avcodec_flush_buffers)
    RESOLVE(avcodec, avcodec_free_context)
    RESOLVE(avcodec, avcodec_get_name)
    RESOLVE(avcodec, avcodec_open2)
    RESOLVE(avcodec, avcodec_parameters_to_context)
    RESOLVE(avcodec, avcodec_profile_name)
    RESOLVE(avcodec, avcodec_receive_frame)
    RESOLVE(avcodec, avcodec_send_packet)
    RESOLVE(avformat, avformat_alloc_context)
    RESOLVE(avformat, avformat_close_input)
    RESOLVE(avformat, avformat_find_stream_info)
    RESOLVE(avformat, avformat_open_input)
    RESOLVE(avformat, avformat_seek_file)
    RESOLVE(avformat, avio_alloc_context)
    RESOLVE(avformat, avio_closep)
    RESOLVE(avformat, avio_context_free)
    RESOLVE(avformat, avio_open)
    RESOLVE(swresample, swr_alloc_set_opts2)
    RESOLVE(swresample, swr_convert)
    RESOLVE(swresample, swr_free)
    RESOLVE(swresample, swr_get_out_samples)
    RESOLVE(swresample, swr_init)
    // Encoding: FFmpeg 5.1 (libavcodec 59) through 7.1.
    RESOLVE(avutil, av_frame_get_buffer)
    RESOLVE(avutil, av_frame_make_writable)
    RESOLVE(avformat, av_interleaved_write_frame)
    RESOLVE(avcodec, av_packet_rescale_ts)
    RESOLVE(avformat, av_write_trailer)
    RESOLVE(avcodec, avcodec_find_encoder_by_name)
    RESOLVE(avcodec, avcodec_parameters_from_context)
    RESOLVE(avcodec, avcodec_receive_packet)
    RESOLVE(avcodec, avcodec_send_frame)
    RESOLVE(avcodec, avcodec_version)
    RESOLVE(avformat, avformat_alloc_output_context2)
    RESOLVE(avformat, avformat_free_context)
    RESOLVE(avformat, avformat_new_stream)
    RESOLVE(avformat, avformat_write_header)
#undef RESOLVE
    loaded = 1;
}

const struct earshot_ffmpeg *earshot_ffmpeg_load(const char **error) {
    pthread_once(&once, load);
    if (loaded) return &table;
    if (error) *error = failure;
    return NULL;
}
