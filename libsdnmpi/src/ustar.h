/* ustar.h -- what the profiler's archive writer (prof_tar.c) and the trace reader (trace_files.c)
 * share of the POSIX ustar format: the block size, the header's field offsets, the checksum. */
#ifndef SDNMPI_USTAR_H
#define SDNMPI_USTAR_H

#define USTAR_BLOCK 512
#define USTAR_NAME 0       /* 100 bytes */
#define USTAR_MODE 100     /* 8 */
#define USTAR_UID 108      /* 8 */
#define USTAR_GID 116      /* 8 */
#define USTAR_SIZE 124     /* 12, octal */
#define USTAR_MTIME 136    /* 12 */
#define USTAR_CHKSUM 148   /* 8 */
#define USTAR_TYPE 156     /* 1: '0' or '\0' = regular file */
#define USTAR_MAGIC 257    /* "ustar" */
#define USTAR_VERSION 263  /* "00" */
#define USTAR_PREFIX 345   /* 155 */

/* The header checksum: the sum of its 512 bytes, with the checksum field counted as spaces. */
unsigned long sdnmpi_ustar_checksum(const unsigned char *header);

#endif
