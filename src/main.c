/* main.c: MPI set-up and tear-down around run(); everything else lives in the library. */
#include <mpi.h>

#include "tokstorm/run.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int status = run(argc, argv, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
