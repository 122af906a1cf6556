// Copyright 2026 The shoal Authors.
// Umbrella header: everything a program needs to use shoal.
#ifndef SHOAL_INCLUDE_SHOAL_SHOAL_H_
#define SHOAL_INCLUDE_SHOAL_SHOAL_H_
#include "shoal/db.h"       // IWYU pragma: export
#include "shoal/file_system.h"  // IWYU pragma: export
#include "shoal/filter.h"   // IWYU pragma: export
#include "shoal/options.h"  // IWYU pragma: export
#include "shoal/record.h"   // IWYU pragma: export
#include "shoal/record_iterator.h"  // IWYU pragma: export
#include "shoal/segment_writer.h"  // IWYU pragma: export
#endif  // SHOAL_INCLUDE_SHOAL_SHOAL_H_
