"""Croupier's games as research environments (the optional `envs` extra): PettingZoo AEC
environments and OpenSpiel games over the same engines that serve tables."""
