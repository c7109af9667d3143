// A checksum of a buffer's bytes, computed where the bytes are: the gate
// compares an input's checksum before and after a candidate ran, and
// downloading gigabytes to hash them on the host would cost more than the
// kernel. Each 8-byte word is mixed with its index (SplitMix64's
// finalizer) and the results are summed modulo 2^64: order-independent, so
// the reduction may run in any order and still give the same value, and
// any change of a single bit changes the sum. The tail (size % 8 bytes) is
// mixed in by one thread. Not cryptographic: it detects, it does not
// authenticate.

__device__ static unsigned long long mix(unsigned long long z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

extern "C" __global__ void kl_checksum(const unsigned char *data, long long bytes, unsigned long long *out) {
  const unsigned long long *words = reinterpret_cast<const unsigned long long *>(data);
  long long nwords = bytes / 8;
  unsigned long long acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nwords;
       i += (long long)gridDim.x * blockDim.x)
    acc += mix(words[i] ^ mix((unsigned long long)i + 0x9E3779B97F4A7C15ull));
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned long long tail = 0;
    for (long long b = nwords * 8; b < bytes; b++) tail = (tail << 8) | data[b];
    acc += mix(tail ^ (unsigned long long)bytes);
  }
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}
