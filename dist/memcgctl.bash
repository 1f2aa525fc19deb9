# bash completion for memcgctl(1): subcommands, options, cgroups (relative
# to the mount: -m/--mount, $MEMCGFS_MOUNT, or the first fuse.memcgfs
# mount), gfp and slab flags, page types and trace events.
# Installed as share/bash-completion/completions/memcgctl.

_memcgctl_mount()
{
	local i m=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-m | --mount) m=${COMP_WORDS[i + 1]} ;;
		--mount=*) m=${COMP_WORDS[i]#--mount=} ;;
		esac
	done
	[[ -n $m ]] || m=${MEMCGFS_MOUNT-}
	[[ -n $m ]] || m=$(awk '$3 == "fuse.memcgfs" { print $2; exit }' /proc/self/mounts 2>/dev/null)
	printf '%s' "$m"
}

# cgroup paths under the mount, a level at a time ("a/", then "a/b/"), and
# absolute directories
_memcgctl_cgroups()
{
	local cur=$1 mnt d
	compopt -o nospace 2>/dev/null
	if [[ $cur == /* ]]; then
		compgen -d -S / -- "$cur"
		return
	fi
	mnt=$(_memcgctl_mount)
	[[ -d $mnt ]] || return
	for d in "$mnt/$cur"*/; do
		[[ -d $d ]] && printf '%s\n' "${d#"$mnt"/}"
	done
}

_memcgctl()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi

	local cmds="kmalloc kfree kmem-cache alloc-pages free-pages mark-page-accessed drain whoami check run sandbox tree stat top trace"
	local gfp="GFP_KERNEL GFP_KERNEL_ACCOUNT GFP_NOWAIT GFP_ATOMIC GFP_NOFS GFP_NOIO GFP_USER
		__GFP_ACCOUNT __GFP_ZERO __GFP_RECLAIMABLE __GFP_NOFAIL __GFP_NORETRY __GFP_NOWARN none"
	local slab="SLAB_HWCACHE_ALIGN SLAB_ACCOUNT SLAB_RECLAIM_ACCOUNT SLAB_PANIC SLAB_NO_MERGE"
	local types="anon file shmem kernel_stack pagetables percpu sock vmalloc"
	local events="kmalloc kmem_cache_alloc kfree kmem_cache_free mm_page_alloc mm_page_free"
	local common="-m --mount --json -h --help"

	case $prev in
	-m | --mount)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	-g | --cgroup)
		COMPREPLY=($(_memcgctl_cgroups "$cur"))
		return
		;;
	-e | --event)
		# after a comma: the events not listed yet
		local pre= ev left=
		[[ $cur == *,* ]] && pre=${cur%,*},
		for ev in $events; do
			[[ ,$pre == *,$ev,* ]] || left+=" $ev"
		done
		COMPREPLY=($(compgen -P "$pre" -W "$left" -- "${cur##*,}"))
		return
		;;
	-n | --count | -d | --delay | --order | --align | --site | --iterations)
		return
		;;
	esac

	# the subcommand: the first word that is not an option or its argument
	local i cmd= sub= nargs=0
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-m | --mount) ((i++)) ;;
		-*) ;;
		*)
			if [[ -z $cmd ]]; then
				cmd=${words[i]}
			elif [[ $cmd == kmem-cache && -z $sub ]]; then
				sub=${words[i]}
			else
				((nargs++))
			fi
			;;
		esac
	done
	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$cmds -m --mount --json --bytes -h --help --version" -- "$cur"))
		return
	fi

	local opts=$common
	case $cmd in
	kmalloc) opts+=" -n --count --site -g --cgroup --batch --hold" ;;
	kfree | free-pages | mark-page-accessed) opts+=" --batch" ;;
	alloc-pages) opts+=" --order -n --count -g --cgroup --batch --hold" ;;
	whoami) opts+=" -g --cgroup" ;;
	run | sandbox) opts+=" -g --cgroup" ;;
	tree | stat) opts+=" --bytes" ;;
	top) opts+=" --bytes -d --delay -n --iterations -b --batch" ;;
	trace) opts+=" -e --event -g --cgroup -n --count --no-enable" ;;
	kmem-cache)
		case $sub in
		create) opts+=" --align" ;;
		alloc) opts+=" -n --count --site -g --cgroup --batch --hold" ;;
		free) opts+=" --batch" ;;
		esac
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi

	case $cmd in
	kmalloc)
		((nargs == 1)) && COMPREPLY=($(compgen -W "$gfp" -- "$cur"))
		;;
	alloc-pages)
		((nargs == 0)) && COMPREPLY=($(compgen -W "$types" -- "$cur"))
		;;
	tree | stat | top)
		((nargs == 0)) && COMPREPLY=($(_memcgctl_cgroups "$cur"))
		;;
	run | sandbox)
		if ((nargs == 0)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		;;
	kmem-cache)
		if [[ -z $sub ]]; then
			COMPREPLY=($(compgen -W "create alloc free destroy" -- "$cur"))
		elif [[ $sub == create ]] && ((nargs == 2)); then
			COMPREPLY=($(compgen -W "$slab" -- "$cur"))
		elif [[ $sub == alloc ]] && ((nargs == 1)); then
			COMPREPLY=($(compgen -W "$gfp" -- "$cur"))
		elif [[ $sub != create ]] && ((nargs == 0)); then
			local mnt
			mnt=$(_memcgctl_mount)
			[[ -r $mnt/slabinfo ]] &&
				COMPREPLY=($(compgen -W "$(awk 'NR > 2 { print $1 }' "$mnt/slabinfo")" -- "$cur"))
		fi
		;;
	esac
} &&
	complete -F _memcgctl memcgctl
