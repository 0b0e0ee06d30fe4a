/* libcoll C API, shaped like NCCL's so that a program written against NCCL ports by renaming.
 * Enum values are numbered exactly as NCCL numbers them. */
#ifndef COLL_COLL_H
#define COLL_COLL_H

#include <stddef.h>

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
 * collGetUniqueId (which starts the store in that process) and ships it to the others. */
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

const char* collGetErrorString(collResult_t result);
/* The message of the last failed call on this thread (naming rank, peer and operation). */
const char* collGetLastError(collComm_t comm);

#ifdef __cplusplus
}
#endif

#endif /* COLL_COLL_H */
