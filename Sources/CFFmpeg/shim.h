#ifndef EARSHOT_CFFMPEG_SHIM_H
#define EARSHOT_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswresample/swresample.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libavutil/sha.h>

// FFmpeg's error codes are function-like macros (FFERRTAG, AVERROR), which Swift does not import.
static inline int earshot_averror_eof(void) { return AVERROR_EOF; }
static inline int earshot_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int earshot_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int earshot_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int earshot_averror_demuxer_not_found(void) { return AVERROR_DEMUXER_NOT_FOUND; }
static inline int earshot_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline int earshot_averror_patchwelcome(void) { return AVERROR_PATCHWELCOME; }
static inline int earshot_averror_bug(void) { return AVERROR_BUG; }
static inline int earshot_averror_enomem(void) { return AVERROR(ENOMEM); }
static inline int earshot_averror_exit(void) { return AVERROR_EXIT; }
static inline int earshot_averror_protocol_not_found(void) { return AVERROR_PROTOCOL_NOT_FOUND; }
static inline int earshot_averror_http_not_found(void) { return AVERROR_HTTP_NOT_FOUND; }
static inline int64_t earshot_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int earshot_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int earshot_avfmt_globalheader(void) { return AVFMT_GLOBALHEADER; }

#endif
