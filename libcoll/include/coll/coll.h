/* libcoll C API, shaped like NCCL's so that a program written against NCCL ports by renaming.
 * Enum values are numbered exactly as NCCL numbers them. */
#ifndef COLL_COLL_H
#define COLL_COLL_H

#include <stddef.h>

/* The library version, as NCCL encodes its own: COLL_VERSION(2, 19, 3) == 21903. */
#define COLL_MAJOR 0
#define COLL_MINOR 1
#define COLL_PATCH 0
#define COLL_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
#define COLL_VERSION_CODE COLL_VERSION(COLL_MAJOR, COLL_MINOR, COLL_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  collSuccess = 0,
  collUnhandledCudaError = 1,
  collSystemError = 2,
  collInternalError = 3,
  collInvalidArgument = 4,
  collInvalidUsage = 5,
  collRemoteError = 6, /* a peer failed, disagreed, or did not answer in time */
  collInProgress = 7,
  collTimeout = 8, /* libcoll only: a peer did not answer within COLL_TIMEOUT */
  collNumResults = 9
} collResult_t;

typedef enum {
  collInt8 = 0,
  collChar = 0,
  collUint8 = 1,
  collInt32 = 2,
  collInt = 2,
  collUint32 = 3,
  collInt64 = 4,
  collUint64 = 5,
  collFloat16 = 6,
  collHalf = 6,
  collFloat32 = 7,
  collFloat = 7,
  collFloat64 = 8,
  collDouble = 8,
  collBfloat16 = 9,
  collNumTypes = 10
} collDataType_t;

typedef enum {
  collSum = 0,
  collProd = 1,
  collMax = 2,
  collMin = 3,
  collAvg = 4,
  collNumOps = 5
} collRedOp_t;

#define COLL_UNIQUE_ID_BYTES 128
/* Names the job's rendezvous: the store address and the job token. Rank 0 creates it with
 * collGetUniqueId (which starts the store in that process, on COLL_STORE_HOST or else on the
 * interface other hosts reach) and ships it to the others. A job going on after a failure
 * (collCommAbort on every rank) needs a new id: a failed job's store keeps its abort message. */
typedef struct {
  char internal[COLL_UNIQUE_ID_BYTES];
} collUniqueId;

typedef struct collComm* collComm_t;
/* Streams exist for NCCL source compatibility; host collectives ignore them (pass NULL). */
typedef void* collStream_t;

collResult_t collGetUniqueId(collUniqueId* uniqueId);
collResult_t collCommInitRank(collComm_t* comm, int nranks, collUniqueId commId, int rank);
/* Initializes from the environment contract (COLL_RANK, COLL_SIZE, COLL_STORE, COLL_TOKEN) or,
 * under mpirun, from MPI. */
collResult_t collCommInitFromEnv(collComm_t* comm);
collResult_t collCommDestroy(collComm_t comm);
collResult_t collCommCount(const collComm_t comm, int* count);
collResult_t collCommUserRank(const collComm_t comm, int* rank);

/* Memory the ranks of one host map into each other (like ncclMemAlloc): all-reduces whose
 * buffers come from here read peers' data with plain loads (peer_read), no system call per read.
 * *ptr: at least `size` bytes, zeroed. Free with collMemFree (NULL is a no-op). */
collResult_t collMemAlloc(void** ptr, size_t size);
collResult_t collMemFree(void* ptr);

collResult_t collAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           collDataType_t datatype, collRedOp_t op, collComm_t comm,
                           collStream_t stream);

/* Non-blocking all-reduce: queued on the communicator's progress engine, run in order while the
 * caller computes. The buffers must stay untouched until collWait returns (or collTest reports
 * done). `tag` identifies the data (e.g. a tensor id; 0 = none): ranks that queue different
 * tensors in the same slot fail with an error saying so. */
typedef struct collRequest* collRequest_t;
collResult_t collAllReduceAsync(const void* sendbuff, void* recvbuff, size_t count,
                                collDataType_t datatype, collRedOp_t op, unsigned long long tag,
                                collComm_t comm, collRequest_t* request);
/* *done = 1 once complete (the request stays valid until collWait). */
collResult_t collTest(collRequest_t request, int* done);
/* Waits for completion and releases the request. */
collResult_t collWait(collRequest_t request);

/* The collectives beside all-reduce, with NCCL's semantics and argument order. In place:
 * sendbuff == recvbuff (broadcast, reduce); sendbuff == recvbuff + rank * sendcount
 * (all-gather); recvbuff == sendbuff + rank * recvcount (reduce-scatter). */
collResult_t collBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           collDataType_t datatype, int root, collComm_t comm, collStream_t stream);
/* recvbuff is written on the root only (other ranks may pass NULL). */
collResult_t collReduce(const void* sendbuff, void* recvbuff, size_t count, collDataType_t datatype,
                        collRedOp_t op, int root, collComm_t comm, collStream_t stream);
/* recvbuff holds nranks * sendcount elements, rank r's at offset r * sendcount. */
collResult_t collAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           collDataType_t datatype, collComm_t comm, collStream_t stream);
/* sendbuff holds nranks * recvcount elements; rank r receives block r of the reduction. */
collResult_t collReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               collDataType_t datatype, collRedOp_t op, collComm_t comm,
                               collStream_t stream);

/* Collective over comm: ranks passing the same color form *newcomm, ordered by key then by
 * rank in comm; COLL_SPLIT_NOCOLOR gives *newcomm = NULL. The new communicator shares comm's
 * transport and may outlive it; destroy it with collCommDestroy. */
#define COLL_SPLIT_NOCOLOR (-1)
collResult_t collCommSplit(collComm_t comm, int color, int key, collComm_t* newcomm);
/* From any thread: the call in progress on comm (and on communicators sharing its transport)
 * fails promptly; then comm is destroyed. */
collResult_t collCommAbort(collComm_t comm);
/* *version = COLL_VERSION_CODE of the library actually loaded. */
collResult_t collGetVersion(int* version);

const char* collGetErrorString(collResult_t result);
/* The message of the last failed call on this thread (naming rank, peer and operation). */
const char* collGetLastError(collComm_t comm);

#ifdef __cplusplus
}
#endif

#endif /* COLL_COLL_H */
