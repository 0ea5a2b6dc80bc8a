/* ustar.c -- see ustar.h. */
#include "ustar.h"

unsigned long sdnmpi_ustar_checksum(const unsigned char *header)
{
    unsigned long sum = 0;
    for (int i = 0; i < USTAR_BLOCK; i++)
        sum += (i >= USTAR_CHKSUM && i < USTAR_CHKSUM + 8) ? (unsigned char)' ' : header[i];
    return sum;
}
