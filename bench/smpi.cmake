# The SimGrid SMPI build (bench/scaling configures it in build-smpi with CC=smpicc):
# the search path (target, algebra, exact, bounds, symmetry, search, sched, store) against serial
# HDF5, and bench/scaling_driver, which runs the real scheduler on simulated ranks.
# No approx (PETSc links the real Open MPI), no cli, no tests. The read guard's fork is
# off in this build (every simulated rank lives in the one smpirun process).
if(NOT CMAKE_C_COMPILER MATCHES "smpicc")
  message(FATAL_ERROR "HF_SMPI needs CC=smpicc (Debian package libsimgrid-dev)")
endif()
pkg_check_modules(HDF5S REQUIRED IMPORTED_TARGET hdf5-serial)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
find_path(FLINT_INCLUDE_DIR flint/fmpz_mat.h REQUIRED)
find_library(FLINT_LIBRARY flint REQUIRED)
find_library(GMP_LIBRARY gmp REQUIRED)
find_path(CDD_INCLUDE_DIR cddlib/cdd.h REQUIRED)
find_library(CDD_LIBRARY cddgmp REQUIRED)
pkg_check_modules(NAUTY REQUIRED IMPORTED_TARGET nauty) # symgraph.c (<nauty/...> headers)

set(HF_SMPI_MODULES target algebra exact bounds symmetry search sched store core)
set(HF_SMPI_SOURCES)
foreach(mod ${HF_SMPI_MODULES})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${mod}/*.c)
  list(APPEND HF_SMPI_SOURCES ${srcs})
endforeach()
list(FILTER HF_SMPI_SOURCES EXCLUDE REGEX "/src/store/approx_file.c$")
add_library(headfuse_smpi STATIC ${HF_SMPI_SOURCES})
target_include_directories(headfuse_smpi PUBLIC ${CMAKE_SOURCE_DIR}/include ${FLINT_INCLUDE_DIR}
  PRIVATE ${CMAKE_SOURCE_DIR}/src ${CDD_INCLUDE_DIR})
target_compile_definitions(headfuse_smpi PUBLIC HF_SMPI=1 HF_VERSION="${PROJECT_VERSION}"
  HF_GIT_COMMIT="smpi" PRIVATE HF_REPO_DIR="${CMAKE_SOURCE_DIR}")
target_link_libraries(headfuse_smpi PUBLIC PkgConfig::HDF5S PkgConfig::JANSSON ${CDD_LIBRARY}
  ${FLINT_LIBRARY} ${GMP_LIBRARY} m)
target_link_libraries(headfuse_smpi PRIVATE PkgConfig::NAUTY)

add_executable(scaling_driver ${CMAKE_SOURCE_DIR}/bench/scaling_driver.c)
target_link_libraries(scaling_driver PRIVATE headfuse_smpi)
target_include_directories(scaling_driver PRIVATE ${CMAKE_SOURCE_DIR}/src) # search/cone_impl.h
