"""fake_holder.py -- a worker's PullObject stream that lies or dies, for
test_pulls.py. It answers /manta.WorkerService/PullObject (any object id,
any token) with hand-encoded ObjectChunk messages.

usage: fake_holder.py HOST MODE     prints "READY <port>", then serves
  die      a 64 MiB object in 8 MiB chunks: sends 2, prints "SENT", hangs
           (the test kills it with SIGKILL)
  short    a 64 MiB object: one chunk, then the stream ends OK
  offset   a chunk at an offset that is not a multiple of the chunk size
  beyond   a chunk at an offset past the object's end
  long     a chunk longer than the chunk size
  garbage  bytes that are no ObjectChunk
  huge     an object far larger than the puller's store
  stall    one chunk, then nothing until the puller gives up
"""
import sys
import time
from concurrent import futures

import grpc

MIB = 1 << 20
CHUNK = 8 * MIB
SIZE = 64 * MIB


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def f_varint(field, v):
    return varint(field << 3) + varint(v)


def f_bytes(field, b):
    return varint(field << 3 | 2) + varint(len(b)) + b


def chunk(offset, data, size=None, chunk_size=CHUNK):
    """An ObjectChunk; the first one (size given) describes the object."""
    msg = b""
    if size is not None:
        msg += f_bytes(1, f_varint(1, size))  # ObjectInfo.data_size
        msg += f_varint(4, chunk_size)
    msg += f_varint(2, offset) + f_bytes(3, data)
    return msg


def pull(mode):
    def stream(request, context):
        block = bytes(range(256)) * (CHUNK // 256)
        if mode == "die":
            yield chunk(0, block, SIZE)
            yield chunk(CHUNK, block)
            print("SENT", flush=True)
            time.sleep(600)
        elif mode == "short":
            yield chunk(0, block, SIZE)
        elif mode == "offset":
            yield chunk(0, block, SIZE)
            yield chunk(CHUNK + 4096, block)
        elif mode == "beyond":
            yield chunk(0, block, SIZE)
            yield chunk(SIZE + CHUNK, block)
        elif mode == "long":
            yield chunk(0, block + b"x", SIZE)
        elif mode == "garbage":
            yield b"\x1a\xff\xff\xff\xff\x0fnot a chunk"
        elif mode == "huge":
            yield chunk(0, block, 1 << 40)
        elif mode == "stall":
            yield chunk(0, block, SIZE)
            time.sleep(600)
    return stream


class Handler(grpc.GenericRpcHandler):
    def __init__(self, mode):
        self.mode = mode

    def service(self, details):
        if details.method != "/manta.WorkerService/PullObject":
            return None
        return grpc.unary_stream_rpc_method_handler(pull(self.mode))


def main():
    host, mode = sys.argv[1], sys.argv[2]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4),
                         options=[("grpc.max_send_message_length", -1)])
    server.add_generic_rpc_handlers((Handler(mode),))
    port = server.add_insecure_port("%s:0" % host)
    server.start()
    print("READY %d" % port, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
