/* Uses the installed C API: an all-gather, checked. */
#include <coll/coll.h>
#include <stdio.h>

int main(void) {
  collComm_t comm;
  int rank, size, version, i, ok = 1;
  int mine, all[64];
  if (collCommInitFromEnv(&comm) != collSuccess) return 1;
  collCommUserRank(comm, &rank);
  collCommCount(comm, &size);
  collGetVersion(&version);
  if (size > 64) return 1;
  mine = rank * 10;
  if (collAllGather(&mine, all, 1, collInt32, comm, NULL) != collSuccess) return 1;
  for (i = 0; i < size; ++i) ok &= all[i] == i * 10;
  printf("c consumer rank %d of %d, version code %d: %s\n", rank, size, version,
         ok && version == COLL_VERSION_CODE ? "ok" : "WRONG");
  collCommDestroy(comm);
  return ok ? 0 : 1;
}
