#pragma once
// The C++-embedded kernel DSL: include this one header.
#include "halfway/dsl/control.hpp"
#include "halfway/dsl/functions.hpp"
#include "halfway/dsl/kernel.hpp"
#include "halfway/dsl/memory.hpp"
#include "halfway/dsl/types.hpp"
#include "halfway/dsl/value.hpp"
#include "halfway/support/error.hpp"
